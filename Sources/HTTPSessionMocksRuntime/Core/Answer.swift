import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A built answer on its way to a sink: what a stub, a forwarded session, a cancel or the
/// unmatched-request report hands the code under test.
///
/// A class: an answer passes through routing, scheduling and delivery, and copying a struct of
/// optional existentials at each step cost more than the one allocation.
final class Answer: @unchecked Sendable {
  // @unchecked Sendable: every field is a `let`; the body is a value, and the response and
  // error are immutable once made.
  let data: Data?
  let response: URLResponse?
  let error: (any Error)?
  /// Set when no stub matched: the door decides how the client sees it.
  let unmatched: UnmatchedAnswer?
  /// Set when a stub's WebSocket script accepted the upgrade: the connection it runs.
  let conversation: WebSocketConversation?
  /// For a copy cut down for the journal: the size of the whole body.
  let fullByteCount: Int?
  /// For a body delivered in pieces over time: each piece's size and time.
  let pieces: [Exchange.Piece]
  /// Whether the client ended the exchange (a cancel: the code cancelled the task, left the
  /// stream, or closed the connection).
  let endedByClient: Bool
  /// The response's HTTP status, worked out once (the call log reads it for every request).
  let statusCode: Int?
  /// The body's size, worked out once (the journal checks it for every request).
  private let byteCount: Int

  init(
    data: Data?, response: URLResponse?, error: (any Error)?, fullByteCount: Int? = nil,
    pieces: [Exchange.Piece] = [], endedByClient: Bool = false
  ) {
    self.data = data
    self.response = response
    self.error = error
    self.unmatched = nil
    self.conversation = nil
    self.fullByteCount = fullByteCount
    self.pieces = pieces
    self.endedByClient = endedByClient
    self.statusCode = (response as? HTTPURLResponse)?.statusCode
    self.byteCount = data?.count ?? 0
  }

  init(unmatched: UnmatchedAnswer) {
    self.data = nil
    self.response = nil
    self.error = unmatched.error
    self.unmatched = unmatched
    self.conversation = nil
    self.fullByteCount = nil
    self.pieces = []
    self.endedByClient = false
    self.statusCode = nil
    self.byteCount = 0
  }

  /// The handshake that accepts a WebSocket upgrade, with the connection that follows it.
  init(upgrade response: HTTPURLResponse, _ conversation: WebSocketConversation) {
    self.data = nil
    self.response = response
    self.error = nil
    self.unmatched = nil
    self.conversation = conversation
    self.fullByteCount = nil
    self.pieces = []
    self.endedByClient = false
    self.statusCode = response.statusCode
    self.byteCount = 0
  }

  /// This answer, or for a body longer than `limit` a copy whose body is cut there (copied, so
  /// that the journal does not keep the whole body alive).
  func keepingAtMost(_ limit: Int) -> Answer {
    guard byteCount > limit, let data else { return self }
    return Answer(
      data: Data(data.prefix(limit)), response: response, error: error, fullByteCount: data.count,
      pieces: pieces, endedByClient: endedByClient)
  }

  /// This answer with the record of the pieces its body was delivered in (a streamed answer,
  /// or its error when the stream was cut short).
  func delivered(in pieces: [Exchange.Piece]) -> Answer {
    guard !pieces.isEmpty, unmatched == nil, conversation == nil else { return self }
    return Answer(
      data: data, response: response, error: error, fullByteCount: fullByteCount, pieces: pieces,
      endedByClient: endedByClient)
  }

  /// A transport error alone.
  convenience init(error: any Error) {
    self.init(data: nil, response: nil, error: error)
  }

  /// The cancel of `request` by the client: `URLError(.cancelled)`, noted as the client's.
  convenience init(cancelling request: URLRequest) {
    self.init(
      data: nil, response: nil, error: URLError(cancelledFor: request), endedByClient: true)
  }

  /// How the exchange ends with this answer.
  var end: ExchangeEnd {
    if let unmatched { return .unmatched(unmatched) }
    if let conversation { return .upgraded(conversation) }
    if let error { return .failed(error) }
    return .complete
  }

  /// Hands the answer to `sink` at once: the head, the body, the end (an answer with neither
  /// head nor body, such as an error, is its end alone).
  func send(to sink: any ResponseSink) {
    if response == nil && data == nil {
      sink.finish(end)
    } else {
      sink.receiveWhole(response, data, end)
    }
  }
}
