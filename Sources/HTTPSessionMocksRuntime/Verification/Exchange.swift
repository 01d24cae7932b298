import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One request a double sent and what answered it: the response head, the body, the stub.
///
/// A double records an exchange when a task completes (or, for a redirect that the mock
/// follows, when each hop is answered), in ``RecordingSession/exchanges``:
///
/// ```swift
/// let exchange = try #require(mock.exchanges.first)
/// #expect((exchange.response as? HTTPURLResponse)?.statusCode == 200)
/// #expect(exchange.answeredBy == "GET /users/{login} (registered at UserTests.swift:12)")
/// ```
///
/// Response bodies are kept up to ``bodyLimit`` bytes; ``bodyByteCount`` always says the full
/// size. The journal of a mock that a loopback server serves keeps request and response bodies
/// up to a smaller limit of its own (`ServerLimits.maxJournalBodyBytes`, 1 MiB by default);
/// there ``requestBodyByteCount`` says the request body's full size.
public struct Exchange: Sendable, CustomStringConvertible {
  /// The most response body bytes an exchange keeps (4 MiB); a longer body is cut there.
  public static let bodyLimit = 4 << 20

  // The parts are references or plain values, so that recording an exchange (on the hot path
  // of every request) allocates nothing and a copy is a few retains; the answer is shared with
  // what the code under test received.
  private let answer: Answer
  private let stub: StubTable.Origin?
  /// The size of the request's body when the journal cut it, else `nil`.
  private let cutRequestBodyByteCount: Int?

  init(
    taskIdentifier: Int, request: URLRequest, answer: Answer, stub: StubTable.Definition?,
    door: Door
  ) {
    self.taskIdentifier = taskIdentifier
    self.request = request
    self.answer = answer.keepingAtMost(Self.bodyLimit)
    self.stub = stub?.origin
    self.door = door
    self.cutRequestBodyByteCount = nil
  }

  private init(_ exchange: Exchange, request: URLRequest, answer: Answer, cut: Int?) {
    self.taskIdentifier = exchange.taskIdentifier
    self.request = request
    self.answer = answer
    self.stub = exchange.stub
    self.door = exchange.door
    self.cutRequestBodyByteCount = cut
  }

  /// This exchange as a bounded journal keeps it: the response body cut at `limit` bytes, and
  /// `request` (the request with its body cut there) in place of the request, whose body had
  /// `requestBodyByteCount` bytes.
  func keepingBodies(atMost limit: Int, request: URLRequest, requestBodyByteCount: Int)
    -> Exchange
  {
    let answer = answer.keepingAtMost(limit)
    let cut = requestBodyByteCount > limit ? requestBodyByteCount : nil
    if answer === self.answer, cut == nil { return self }
    return Exchange(self, request: request, answer: answer, cut: cut)
  }

  /// The `taskIdentifier` of the task that sent the request.
  public let taskIdentifier: Int
  /// The request as sent, with its body (in a served mock's journal, a body longer than
  /// `ServerLimits.maxJournalBodyBytes` is cut there; ``requestBodyByteCount`` has its size).
  public let request: URLRequest
  /// The full size of the request's body in bytes, also when the journal kept only a prefix.
  public var requestBodyByteCount: Int {
    cutRequestBodyByteCount ?? request.httpBody?.count ?? 0
  }
  /// The response head, or `nil` when the exchange failed before one arrived.
  ///
  /// Every door answers HTTP, so ``httpResponse`` reads it without a cast.
  public var response: URLResponse? { answer.response }
  /// The response head as the HTTP response it is, or `nil` when the exchange failed before
  /// one arrived.
  ///
  /// ```swift
  /// #expect(mock.exchanges.last?.httpResponse?.statusCode == 201)
  /// ```
  public var httpResponse: HTTPURLResponse? { answer.response as? HTTPURLResponse }
  /// The body as received, cut at ``bodyLimit`` bytes (or at a served mock's journal limit);
  /// `nil` when there was none.
  public var body: Data? { answer.data }
  /// The response's HTTP status code, if it is an HTTP response.
  var statusCode: Int? { answer.statusCode }
  /// The full size of the body in bytes.
  public var bodyByteCount: Int { answer.fullByteCount ?? answer.data?.count ?? 0 }
  /// The transport error that ended the exchange, if any.
  public var error: (any Error)? { answer.error }

  /// A piece of a body that was delivered over time.
  public struct Piece: Sendable, Hashable, CustomStringConvertible {
    /// The piece's size in bytes.
    public let byteCount: Int
    /// When the piece was delivered, as time since the request was sent, on the mock's clock
    /// (a ``VirtualClock``'s time moves only when the test advances it).
    public let time: Duration

    init(byteCount: Int, time: Duration) {
      self.byteCount = byteCount
      self.time = time
    }

    /// Such as `12 bytes at 2.0 seconds`.
    public var description: String { "\(byteCount) bytes at \(time)" }
  }

  /// The pieces in which a streamed body was delivered, in order, with the time of each:
  /// empty for an answer given whole.
  ///
  /// A stub's ``StubResponse/dribbled(inChunks:over:)`` body and
  /// ``StubResponse/events(_:every:status:headers:)`` stream are delivered so, on every door:
  ///
  /// ```swift
  /// mock.stub(.get("/ticks"), with: .events(ticks, every: .seconds(1)))
  /// // ...
  /// #expect(mock.exchanges.last?.pieces.map(\.time) == [.seconds(1), .seconds(2)])
  /// ```
  ///
  /// A stream cut short (a cancel, a timeout) lists the pieces delivered before its end.
  public var pieces: [Piece] { answer.pieces }

  /// Whether the client ended the exchange before its answer was complete: the code cancelled
  /// the task or left the stream early (injected), URL loading stopped the protocol (the
  /// URLProtocol bridge), or the client closed the connection (the loopback server). The
  /// exchange's error is then `URLError(.cancelled)`, and ``pieces`` lists what the client had
  /// received when it left: it left after piece `pieces.count`.
  ///
  /// ```swift
  /// #expect(mock.exchanges.last?.endedByClient == true)
  /// #expect(mock.exchanges.last?.pieces.count == 2)  // it left after the second event
  /// ```
  public var endedByClient: Bool { answer.endedByClient }

  /// The WebSocket connection this exchange's upgrade opened, if it did.
  var webSocketConversation: WebSocketConversation? { answer.conversation }
  /// The stub that answered, with where it was registered, such as
  /// `GET /users/{login} (registered at UserTests.swift:12)`; `nil` when no stub did (a
  /// forwarding spy, an unmatched request, an answer from the test).
  public var answeredBy: String? { stub?.description }
  /// The matcher of the stub that answered; `nil` when no stub did.
  public var stubMatcher: RequestMatcher? { stub?.matcher }
  /// How the request reached the double: injected, through the URLProtocol bridge or through
  /// the loopback server.
  public let door: Door

  /// `#1 GET https://example.com/a → 200, 12 bytes (GET /a (registered at T.swift:3))`.
  public var description: String {
    var text = "#\(taskIdentifier) \(request.summary) → "
    if let error {
      text += ErrorText.describe(error)
    } else if let http = response as? HTTPURLResponse {
      text += "\(http.statusCode), \(bodyByteCount) bytes"
    } else {
      text += "\(bodyByteCount) bytes"
    }
    if let answeredBy { text += " (\(answeredBy))" }
    return text
  }
}
