import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One request a double sent and what answered it: the response head, the body, the stub.
///
/// A double records an exchange when a task completes (or, for a redirect that the mock
/// follows, when each hop is answered), in ``RecordingSession/exchanges`` and on the
/// `completed` ``SessionEvent``:
///
/// ```swift
/// let exchange = try #require(mock.exchanges.first)
/// #expect((exchange.response as? HTTPURLResponse)?.statusCode == 200)
/// #expect(exchange.answeredBy == "GET /users/{login} (registered at UserTests.swift:12)")
/// ```
///
/// Bodies are kept up to ``bodyLimit`` bytes; ``bodyByteCount`` always says the full size.
public struct Exchange: @unchecked Sendable, CustomStringConvertible {
  // @unchecked Sendable: `URLResponse` and the error are immutable once an answer holds them,
  // and nothing mutates them after the exchange is recorded.

  /// The most body bytes an exchange keeps (4 MiB); a longer body is cut there.
  public static let bodyLimit = 4 << 20

  /// The `taskIdentifier` of the task that sent the request.
  public let taskIdentifier: Int
  /// The request as sent, with its body.
  public let request: URLRequest
  /// The response head, or `nil` when the exchange failed before one arrived.
  public let response: URLResponse?
  /// The body as received, cut at ``bodyLimit`` bytes; `nil` when there was none.
  public let body: Data?
  /// The full size of the body in bytes.
  public let bodyByteCount: Int
  /// The transport error that ended the exchange, if any.
  public let error: (any Error)?
  /// The stub that answered, with where it was registered, such as
  /// `GET /users/{login} (registered at UserTests.swift:12)`; `nil` when no stub did (a
  /// forwarding spy, an unmatched request, an answer from the test).
  public let answeredBy: String?
  /// How the request reached the double: `injected`, `URLProtocol` or `server`.
  public let door: String

  init(
    taskIdentifier: Int, request: URLRequest, response: URLResponse?, body: Data?,
    error: (any Error)?, answeredBy: String?, door: Door
  ) {
    self.taskIdentifier = taskIdentifier
    self.request = request
    self.response = response
    self.bodyByteCount = body?.count ?? 0
    if let body, body.count > Self.bodyLimit {
      self.body = body.prefix(Self.bodyLimit)
    } else {
      self.body = body
    }
    self.error = error
    self.answeredBy = answeredBy
    self.door = door.rawValue
  }

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
