import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The injected door's sink for data and upload tasks: collects the answer and calls the
/// completion handler once, with URLSession's three arguments.
///
/// The async methods use it too, with a handler that resumes their continuation. A streamed
/// (dribbled) body is collected piece by piece and handed over whole at the end, as a real
/// session's completion handler gets it; a stream that fails part-way hands over no body, only
/// the response and the error.
final class CompletionSink: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: the core calls a sink's methods one after another, never at once
  // (ResponseSink's contract), and each delivery hands over under the core's lock; `handler`
  // is a `let`.
  typealias Handler = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

  private let handler: Handler
  private var response: URLResponse?
  private var body: Data?

  init(_ handler: @escaping Handler) {
    self.handler = handler
  }

  func receive(_ response: URLResponse) {
    self.response = response
  }

  func receive(_ body: Data) {
    if self.body == nil { self.body = body } else { self.body?.append(body) }
  }

  func finish(_ end: ExchangeEnd) {
    switch end {
    case .complete: handler(body ?? Data(), response, nil)
    case .failed(let error): handler(nil, response, error)
    case .unmatched(let unmatched): handler(nil, nil, unmatched.error)
    }
  }

  /// The whole answer straight to the handler, with nothing stored.
  func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd) {
    switch end {
    case .complete: handler(body, response, nil)
    case .failed(let error): handler(body, response, error)
    case .unmatched(let unmatched): handler(nil, nil, unmatched.error)
    }
  }
}

/// Where a task's answer goes: a door's sink, or, for the injected door's data and upload
/// tasks, the completion handler itself. A task holds the handler until it needs a sink object
/// (a streamed body, a forward), so that the common request allocates none.
enum Receiver: Sendable {
  case sink(any ResponseSink)
  case handler(CompletionSink.Handler)
  /// A forwarding double's relay (the wrapped task is one of our doubles'): it takes the
  /// answer as it is.
  case relay(ForwardRelay)

  /// Hands over a whole answer: to the sink, or straight to the handler, with URLSession's
  /// three arguments.
  func deliver(_ answer: Answer) {
    switch self {
    case .sink(let sink): answer.send(to: sink)
    case .handler(let handler):
      if let unmatched = answer.unmatched {
        handler(nil, nil, unmatched.error)
      } else {
        handler(answer.data, answer.response, answer.error)
      }
    case .relay(let relay): relay.deliver(answer)
    }
  }

  /// The end alone, for a sink that has had the head and the body (a streamed answer).
  func finish(_ answer: Answer) {
    switch self {
    case .sink(let sink): sink.finish(answer.end)
    case .handler, .relay: deliver(answer)
    }
  }

  /// This receiver as a sink object: the handler wrapped in a ``CompletionSink``.
  var asSink: any ResponseSink {
    switch self {
    case .sink(let sink): return sink
    case .handler(let handler): return CompletionSink(handler)
    case .relay(let relay): return CompletionSink(relay.handler)
    }
  }
}

/// The injected door's sink for download tasks: writes the body to a fresh temporary file and
/// hands the handler its URL; the file is deleted when the handler returns, unless the caller
/// owns it (the async `download(for:)`).
final class DownloadSink: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: as for `CompletionSink`, the core never calls a sink concurrently.
  typealias Handler = @Sendable (URL?, URLResponse?, (any Error)?) -> Void

  private let handler: Handler
  private let keepsFile: Bool
  private let request: URLRequest
  private var response: URLResponse?
  private var body = Data()

  init(request: URLRequest, keepsFile: Bool, _ handler: @escaping Handler) {
    self.request = request
    self.keepsFile = keepsFile
    self.handler = handler
  }

  func receive(_ response: URLResponse) {
    self.response = response
  }

  func receive(_ body: Data) {
    self.body.append(body)
  }

  func finish(_ end: ExchangeEnd) {
    switch end {
    case .failed(let error): handler(nil, response, error)
    case .unmatched(let unmatched): handler(nil, nil, unmatched.error)
    case .complete:
      do {
        let file = try TemporaryFile.write(body)
        handler(file, response, nil)
        if !keepsFile { try? FileManager.default.removeItem(at: file) }
      } catch {
        handler(nil, response, URLError(.cannotCreateFile, for: request))
      }
    }
  }
}
