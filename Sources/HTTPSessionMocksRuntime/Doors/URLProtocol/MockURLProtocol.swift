import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The URLProtocol door into a mock: what ``Bridge`` (a mock's own session) and
/// ``SharedSessionDispatcher`` (`URLSession.shared`) have in common.
///
/// The door only translates. `startLoading()` turns URL loading's request into the one the code
/// sent (the body read from `httpBodyStream` when that is where it is), hands it to the mock's
/// one request path (`send(_:kind:door:to:)`), and a ``ProtocolSink`` turns the answer into
/// `URLProtocolClient` calls. `stopLoading()` cancels the mock's task, so the journal shows the
/// cancel and nothing is delivered after it. Routing, recording, delays on the mock's clock and
/// failure reports all happen behind `send`, as for the injected mock.
///
/// URL loading runs a protocol on threads of its own, where Swift Testing would attribute a
/// report to no test, so the door carries the test's context to the request's work, from one of
/// two places:
/// - where URL loading makes the protocol object, when that is on the test's own task: corelibs
///   makes it inside the task's `resume()` when the configuration has no URL cache. This context
///   is the request's own (a `withKnownIssue` opened after the session was made sees its
///   reports), so it comes first;
/// - otherwise (Apple's URL loading always makes the object on the session's queue; corelibs
///   does on a background thread when there is a URL cache), the context captured where the
///   test routed the requests to the mock (``routingContext()``): a mock's bridge keeps the one
///   of the last `intercept(_:)` or `makeURLSession()` made in a test.
///   ``SharedSessionDispatcher`` relays its reports to its scope's test instead.
class MockURLProtocol: URLProtocol {
  /// The largest request body the bridge reads from a stream: 64 MiB.
  static let maximumStreamedBodySize = 64 << 20

  /// The sink of the exchange under way, so that `stopLoading()` can stop it.
  private var exchange: ProtocolSink?
  /// The test's context where URL loading made the protocol object (this initial value is
  /// computed there), or `nil` when that was not inside a test. The request's work runs on it,
  /// so that what the mock reports (an unmatched request) is recorded in the test, where
  /// `withKnownIssue` and the package's report capture see it.
  private let contextAtCreation = TestContextRelay.captureIfInTest()

  override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

  /// The mock that answers, looked up when loading starts; `nil` when it is gone.
  func answeringMock() -> URLSessionMock? { nil }

  /// What the bridge knows of the session this request came through (see
  /// ``BridgeProfile``); the default here.
  func bridgeProfile() -> BridgeProfile { .default }

  /// Why ``answeringMock()`` found no mock, for the error the code receives.
  var missingMockReason: String { "no URLSessionMock answers this request" }

  /// The test context that the request's work runs in when URL loading made the protocol
  /// object where no test runs: the one captured where the test routed these requests to the
  /// mock. `nil` here: the work then runs where URL loading starts it.
  func routingContext() -> TestContextRelay? { nil }

  override func startLoading() {
    let profile = bridgeProfile()
    let sink = ProtocolSink(
      protocol: self, request: request, deliversPieces: profile.deliversPieces)
    exchange = sink
    guard let context = contextAtCreation ?? routingContext() else {
      return load(into: sink, profile)
    }
    // URLProtocol is not Sendable: the job only reads what URL loading set before
    // `startLoading()` (the request, the task) and never runs at the same time as this method.
    // It runs on the context's task rather than here, and URL loading's thread does not wait
    // for it: the test's task may itself be waiting for URL loading's queue, where corelibs
    // starts the loads of every session.
    nonisolated(unsafe) let loader = self
    context.run { loader.load(into: sink, profile) }
    // The object's own context ends with this one job; the mock's lives on with the mock.
    if context === contextAtCreation { context.close() }
  }

  /// Sends the request through the mock's one request path, answering into `sink`.
  private func load(into sink: ProtocolSink, _ profile: BridgeProfile) {
    guard !sink.isStopped else { return }  // cancelled before the work began
    guard let mock = answeringMock() else {
      sink.fail(URLError(.resourceUnavailable, for: request, description: missingMockReason))
      return
    }
    let kind = Self.kind(of: task)
    // URL loading never shows a protocol the configuration's `httpAdditionalHeaders`: the
    // profile read them where the configuration was intercepted, and they go back in here, so
    // that matching and the journal see what a server would.
    let seen = profile.addingAdditionalHeaders(to: request)
    #if canImport(FoundationNetworking)
      if kind == .download {
        mock.core.reporter.fail(
          "\(request.summary) was made as a download task through the URLSession of this "
            + "URLSessionMock. On Linux, swift-corelibs-foundation crashes a download task that "
            + "a custom URLProtocol answers (swift-corelibs-foundation #3367), so the mock "
            + "fails it with URLError(.unsupportedURL) instead. Use a data task (data(for:), "
            + "dataTask(with:)) here, or inject the mock itself as the HTTPSession, whose "
            + "download tasks work.", at: mock.site)
        let error = URLError(
          .unsupportedURL, for: request,
          description: "download tasks through a URLProtocol crash on Linux; use a data task")
        return refuse(seen, kind: kind, with: error, by: mock, into: sink)
      }
    #endif
    var sent = seen
    switch Self.readBody(of: request) {
    case .inline:
      break
    case .streamed(let body):
      sent.httpBody = body
    case .tooLarge(let size):
      let limit = Self.sizeText(Self.maximumStreamedBodySize)
      mock.core.reporter.fail(
        "The body of \(request.summary) is larger than the \(limit) that the URLProtocol "
          + "bridge reads from an httpBodyStream (\(size)), so the mock did not load it and "
          + "the request fails with URLError(.dataLengthExceedsMaximum). Send a smaller body, "
          + "or inject the mock itself as the HTTPSession.", at: mock.site)
      let error = URLError(
        .dataLengthExceedsMaximum, for: request,
        description: "the request body is larger than \(limit)")
      return refuse(seen, kind: kind, with: error, by: mock, into: sink)
    case .unreadable(let error):
      mock.core.reporter.fail(
        "The httpBodyStream of \(request.summary) failed while the URLProtocol bridge read it: "
          + "\(error). The request fails with URLError(.cannotDecodeRawData).", at: mock.site)
      let error = URLError(
        .cannotDecodeRawData, for: request, description: "the request body stream failed")
      return refuse(seen, kind: kind, with: error, by: mock, into: sink)
    }
    sink.attach(
      mock.send(sent, kind: kind, door: profile.traits, to: sink))
  }

  /// The bridge's own refusal of a request it cannot carry: recorded in the mock's journal as
  /// the request's exchange, like every answer a door gives, and failed with `error`.
  private func refuse(
    _ request: URLRequest, kind: SessionEvent.TaskKind, with error: URLError,
    by mock: URLSessionMock, into sink: ProtocolSink
  ) {
    sink.attach(mock.refuse(request, kind: kind, door: .urlProtocol, with: error, to: sink))
  }

  override func stopLoading() {
    exchange?.stop()
  }

  /// The kind of `task`, as the journal records it.
  private static func kind(of task: URLSessionTask?) -> SessionEvent.TaskKind {
    switch task {
    case is URLSessionUploadTask: return .upload
    case is URLSessionDownloadTask: return .download
    default: return .data
    }
  }

  /// `64 MiB`, `1.5 KiB`, `12 bytes`.
  static func sizeText(_ bytes: Int) -> String {
    if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes >= 1 << 20 { return "\(bytes) bytes (\(bytes >> 20) MiB)" }
    return "\(bytes) bytes"
  }

  enum Body {
    /// The body is `httpBody` (or there is none).
    case inline
    /// The body came as `httpBodyStream` and was read in full.
    case streamed(Data)
    /// The stream held more than ``maximumStreamedBodySize``: at least this text's bytes.
    case tooLarge(String)
    /// The stream failed.
    case unreadable(String)
  }

  /// Reads the request's `httpBodyStream` in full, up to ``maximumStreamedBodySize``.
  ///
  /// URL loading usually hands a protocol the body as a stream (always on Apple platforms when
  /// the code set `httpBodyStream`, often when it set `httpBody`), and the matchers, the journal
  /// and `verify` need the bytes. A `Content-Length` over the limit is refused without reading.
  static func readBody(of request: URLRequest, limit: Int = maximumStreamedBodySize) -> Body {
    guard request.httpBody == nil, let stream = request.httpBodyStream else { return .inline }
    if let declared = request.value(forHTTPHeaderField: "Content-Length").flatMap(Int.init),
      declared > limit
    {
      return .tooLarge(Self.sizeText(declared))
    }
    stream.open()
    defer { stream.close() }
    var body = Data()
    let chunkSize = 64 << 10
    var buffer = [UInt8](repeating: 0, count: chunkSize)
    while true {
      let count = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
        guard let base = pointer.baseAddress else { return -1 }
        return stream.read(base, maxLength: chunkSize)
      }
      if count == 0 { return .streamed(body) }
      if count < 0 {
        return .unreadable(stream.streamError.map { "\($0)" } ?? "the stream reported an error")
      }
      if body.count + count > limit {
        return .tooLarge("more than " + Self.sizeText(limit))
      }
      body.append(contentsOf: buffer[0..<count])
    }
  }
}
