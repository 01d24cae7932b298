import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hands each request to the mock's one request path (`send(_:kind:door:to:)`, door
/// `.server`). Routing, recording, delays on the clock and failure reports all happen there;
/// the connection only translates HTTP/1.1 in and out.
struct MockExchangeHandler: ExchangeHandler {
  let mock: URLSessionMock
  /// The scheme, host and port that requests are rewritten to before they reach the mock
  /// (the `stub-server` command's `--origin`, so that recorded absolute URLs match).
  var origin: URLComponents?
  /// Told about each request once the mock has answered it (the `stub-server` log).
  var observer: (@Sendable (ServedRequest) -> Void)?
  /// The test context reports are made in, when the server was started in a test.
  var context: ReportContext?

  func send(_ request: URLRequest, kind: SessionEvent.TaskKind, to sink: some ResponseSink)
    -> @Sendable () -> Void
  {
    let task = start(request, kind: kind, to: sink)
    return { task.cancel() }
  }

  func refused(
    _ request: URLRequest, kind: SessionEvent.TaskKind, with response: HTTPURLResponse,
    body: Data
  ) {
    let request = rewritten(request)
    // The connection writes the answer: the mock only records it (and the log shows it).
    let sink = DiscardingSink()
    withReports(relayedThrough: context?.current) {
      guard let observer else {
        mock.refuse(request, kind: kind, door: .server, answering: response, body: body, to: sink)
        return
      }
      let observing = ObservingSink(base: sink, request: request, mock: mock, observer: observer)
      mock.refuse(
        request, kind: kind, door: .server, answering: response, body: body, to: observing)
    }
  }

  func reporting<R>(_ body: () -> R) -> R {
    withReports(relayedThrough: context?.current, body)
  }

  /// Sends the request through the mock, as ``send(_:to:)`` does, and returns its task (whose
  /// `taskIdentifier` names it in the journal).
  func start(
    _ request: URLRequest, kind: SessionEvent.TaskKind = .data, to sink: some ResponseSink
  ) -> MockTask {
    let request = rewritten(request)
    // In a test, a report the mock makes (an unmatched request) is recorded on the test's
    // relay, so that it lands in the test and its `withKnownIssue` scope, not on this thread.
    return withReports(relayedThrough: context?.current) {
      send(request, kind: kind, observedInto: sink)
    }
  }

  /// `request` with the scheme, host and port of ``origin``, if there is one.
  private func rewritten(_ request: URLRequest) -> URLRequest {
    var request = request
    if let origin, let url = request.url,
      var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
    {
      parts.scheme = origin.scheme
      parts.host = origin.host
      parts.port = origin.port
      if let rewritten = parts.url { request.url = rewritten }
    }
    return request
  }

  /// Sends the request through the mock and returns its task.
  private func send(
    _ request: URLRequest, kind: SessionEvent.TaskKind, observedInto sink: some ResponseSink
  ) -> MockTask {
    // A request off the wire is recorded as a data task, body or not; a valid upgrade as a
    // WebSocket task.
    guard let observer else { return mock.send(request, kind: kind, door: .server, to: sink) }
    let observing = ObservingSink(base: sink, request: request, mock: mock, observer: observer)
    return mock.send(request, kind: kind, door: .server, to: observing)
  }
}

/// Passes everything on to the connection's sink, and tells the observer how the exchange
/// ended just before the end reaches the connection, so that the observer has run before the
/// client sees the answer. The exchange (with the stub that answered) is the one the core
/// hands over as it records it.
private final class ObservingSink<Base: ResponseSink>: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: `exchange` is written by `recorded(_:)` and read by the end that follows
  // it, on the same thread (the core records an exchange in its critical region and hands the
  // end to the sink just after leaving it); the rest is `let` and Sendable.
  private let base: Base
  private let request: URLRequest
  private let mock: URLSessionMock
  private let observer: @Sendable (ServedRequest) -> Void
  private var exchange: Exchange?

  init(
    base: Base, request: URLRequest, mock: URLSessionMock,
    observer: @escaping @Sendable (ServedRequest) -> Void
  ) {
    self.base = base
    self.request = request
    self.mock = mock
    self.observer = observer
  }

  /// Keeps the exchange and calls nothing but the base's `recorded`, as the core's lock is held
  /// (no lock of its own: see the comment on the class).
  func recorded(_ exchange: Exchange) {
    self.exchange = exchange
    base.recorded(exchange)
  }

  func receive(_ response: URLResponse) { base.receive(response) }
  func receive(_ body: Data) { base.receive(body) }
  func forwarding(_ request: URLRequest) -> URLRequest { base.forwarding(request) }

  func finish(_ end: ExchangeEnd) {
    observe(end)
    base.finish(end)
  }

  func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd) {
    observe(end)
    base.receiveWhole(response, body, end)
  }

  private func observe(_ end: ExchangeEnd) {
    observer(ServedRequest(request, end, exchange: exchange, mock: mock))
  }
}

/// A sink for an answer that the connection writes itself: it takes nothing.
private final class DiscardingSink: ResponseSink {
  func receive(_ response: URLResponse) {}
  func receive(_ body: Data) {}
  func finish(_ end: ExchangeEnd) {}
}
