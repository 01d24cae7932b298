import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A built answer on its way to a sink: what a stub, a forwarded session, a cancel or the
/// unmatched-request report hands the code under test.
struct Answer: @unchecked Sendable {
  // @unchecked Sendable: the body is a value, and the response and error are immutable once
  // made; nothing mutates them after the answer is built.
  var data: Data?
  var response: URLResponse?
  var error: (any Error)?
  /// Set when no stub matched: the door decides how the client sees it.
  var unmatched: UnmatchedAnswer?

  init(data: Data?, response: URLResponse?, error: (any Error)?) {
    self.data = data
    self.response = response
    self.error = error
  }

  init(unmatched: UnmatchedAnswer) {
    self.init(data: nil, response: nil, error: unmatched.error)
    self.unmatched = unmatched
  }

  /// A transport error alone.
  init(error: any Error) {
    self.init(data: nil, response: nil, error: error)
  }

  /// Hands the answer to `sink`: the head, the body, the end.
  func send(to sink: any ResponseSink) {
    if let response { sink.receive(response) }
    if let data { sink.receive(data) }
    if let unmatched {
      sink.finish(.unmatched(unmatched))
    } else if let error {
      sink.finish(.failed(error))
    } else {
      sink.finish(.complete)
    }
  }
}
