import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where a door writes what the mock answers: the one way out of the session core.
///
/// Every door into a double (the injected `HTTPSession` methods, the URLProtocol bridge, the
/// loopback server) hands its request to ``URLSessionMock/send(_:kind:door:to:)`` with a sink,
/// and translates what the sink receives back into its own terms: a completion handler's three
/// arguments, a `URLProtocolClient`'s callbacks, HTTP/1.1 bytes.
///
/// The core calls a sink in this order, never concurrently: at most one `receive(_:)` of the
/// response head, then zero or more `receive(_:)` of body pieces, then exactly one `finish(_:)`.
/// The calls may come synchronously inside `send` (an answer with no delay) or later, on the
/// thread that advances the mock's clock. No lock is held while a sink runs.
///
/// An answer the core has whole comes through ``receiveWhole(_:_:_:)`` (an error alone through
/// `finish(_:)`); only a streamed body (a stub's `dribbled(inChunks:over:)`) comes as separate
/// calls: the head at the answer's time, each piece when the clock reaches it, then the end. So
/// a door that writes pieces as they come (the server's chunked encoding) knows a stream by its
/// separate `receive(_:)` of the head. A cancel or a timeout during a stream ends it with
/// `finish(.failed(_:))`, and nothing follows. Sinks are classes:
/// the core hands one around on every request, and a class reference copies with one retain.
package protocol ResponseSink: AnyObject, Sendable {
  /// The response head: status and headers for HTTP.
  func receive(_ response: URLResponse)
  /// A piece of the body, in order; an empty body may arrive as one empty piece.
  func receive(_ body: Data)
  /// The end of the exchange; nothing follows it.
  func finish(_ end: ExchangeEnd)
  /// A whole answer at once: by default, the head, the body and the end, each as above. A sink
  /// that only wants the whole answer (a completion handler's) may take it in one call.
  func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd)
  /// The exchange the journal records for this answer (with the stub that answered), just
  /// before the answer's end reaches the sink. Unlike the other calls, it comes with the core's
  /// lock held, in the critical region that records it: keep the value, call nothing, take no
  /// lock. The end follows on the same thread once the core's lock is released, so a plain
  /// field may keep the value. By default, nothing.
  func recorded(_ exchange: Exchange)
  /// The request the mock is about to send on to another session for this exchange (a proxied
  /// stub's, a pass-through policy's), and what is sent instead: a door that is itself a hop on
  /// the way (the loopback server) adds its `Via` element, and notes where the request goes, so
  /// that it can name the upstream if the answer fails. Called once for each forward, before
  /// the forwarded request is made, without the core's lock. By default, the request as it is.
  func forwarding(_ request: URLRequest) -> URLRequest
}

extension ResponseSink {
  package func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd) {
    if let response { receive(response) }
    if let body { receive(body) }
    finish(end)
  }

  package func recorded(_ exchange: Exchange) {}

  package func forwarding(_ request: URLRequest) -> URLRequest { request }
}

/// How an exchange ended.
package enum ExchangeEnd: Sendable {
  /// The whole answer was delivered.
  case complete
  /// A transport error ended it: a stub's `URLError`, a cancellation, a timeout.
  case failed(any Error)
  /// No stub matched; the core has already reported the failure to the test.
  case unmatched(UnmatchedAnswer)
  /// A stub's WebSocket script accepted the upgrade (the head received before this is the
  /// `101 Switching Protocols`): the door now carries the connection, calling the
  /// conversation's `start(with:)` once the client has the handshake. Only a task of kind
  /// `.webSocket` ends so.
  case upgraded(WebSocketConversation)
}

/// What a door gives the client for a request that no stub matched.
package struct UnmatchedAnswer: Sendable {
  /// The near-miss report, as the test failure showed it.
  package let report: String
  /// The error the injected mock hands the code under test.
  package let error: URLError
  /// The status a server answers with: 404 when no stub matched, 500 when matching ran past
  /// its budget (``MatchLimits``).
  package var status = 404
}
