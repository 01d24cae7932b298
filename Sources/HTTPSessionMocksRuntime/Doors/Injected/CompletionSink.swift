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
    case .upgraded(let conversation): handler(nil, response, conversation.refuse())
    }
  }

  /// The whole answer straight to the handler, with nothing stored.
  func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd) {
    switch end {
    case .complete: handler(body, response, nil)
    case .failed(let error): handler(body, response, error)
    case .unmatched(let unmatched): handler(nil, nil, unmatched.error)
    case .upgraded(let conversation): handler(nil, response, conversation.refuse())
    }
  }
}
