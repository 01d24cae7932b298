import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A message that crossed a stubbed WebSocket, as the journal recorded it.
///
/// ```swift
/// let messages = mock.webSocketMessages(for: .get("/chat"))
/// #expect(messages.map(\.direction) == [.fromServer, .fromClient])
/// ```
///
/// See ``URLSessionMock/webSocketMessages(for:)``.
public struct WebSocketMessageRecord: Sendable, CustomStringConvertible {
  /// Which way a message went.
  public enum Direction: Sendable, Hashable, CustomStringConvertible {
    /// Sent by the code under test (the client).
    case fromClient
    /// Sent by the stub's script (the server).
    case fromServer

    /// `client → server` or `server → client`.
    public var description: String {
      switch self {
      case .fromClient: return "client → server"
      case .fromServer: return "server → client"
      }
    }
  }

  let payload: WebSocketPayload

  /// Which way the message went.
  public let direction: Direction
  /// When the message was sent, as time since the connection opened on the mock's clock
  /// (a ``VirtualClock``'s time moves only when the test advances it).
  public let time: Duration
  /// The message: text or binary. On a served mock, the journal keeps at most
  /// `ServerLimits.maxJournalBodyBytes` of a connection's messages together, so a message
  /// may hold only its first bytes, or none; ``byteCount`` says how long it was.
  public var message: URLSessionWebSocketTask.Message { payload.message }
  /// The message's full size in bytes (UTF-8 for text), however much of it ``message`` kept.
  public var byteCount: Int { cutFrom < 0 ? payload.byteCount : cutFrom }
  /// The full size of a message the journal cut, or -1 for one it kept whole, whose size is
  /// its payload's: counted when read, not for each message recorded (a text's UTF-8 count
  /// was about 40 instructions a message in the `websocket-messages` benchmark).
  private let cutFrom: Int

  /// A message kept whole.
  init(_ payload: WebSocketPayload, _ direction: Direction, at time: Duration) {
    self.payload = payload
    self.direction = direction
    self.time = time
    self.cutFrom = -1
  }

  /// A message of `byteCount` bytes of which the journal kept `payload`.
  init(
    _ payload: WebSocketPayload, _ direction: Direction, at time: Duration, byteCount: Int
  ) {
    self.payload = payload
    self.direction = direction
    self.time = time
    self.cutFrom = byteCount
  }

  /// Such as `server → client .string("welcome") at 0.0 seconds`.
  public var description: String { "\(direction) \(payload) at \(time)" }
}

/// How a stubbed WebSocket was closed, as the journal recorded it: by the script's
/// ``WebSocketStep/close(_:reason:)``, by a report of an unexpected message (code 1008), or by
/// the client's `cancel(with:reason:)`.
///
/// See ``URLSessionMock/webSocketCloses(for:)``.
public struct WebSocketCloseRecord: Sendable, CustomStringConvertible {
  /// The side that closed.
  public let direction: WebSocketMessageRecord.Direction
  /// The close code.
  public let code: URLSessionWebSocketTask.CloseCode
  /// The reason sent with the close, if any.
  public let reason: Data?
  /// When the close was sent, as time since the connection opened on the mock's clock.
  public let time: Duration

  init(
    _ direction: WebSocketMessageRecord.Direction, code: URLSessionWebSocketTask.CloseCode,
    reason: Data?, at time: Duration
  ) {
    self.direction = direction
    self.code = code
    self.reason = reason
    self.time = time
  }

  /// Such as `server → client close 1000 "done" at 2.0 seconds`.
  public var description: String {
    let text = reason.map { " \(String(reflecting: String(decoding: $0, as: UTF8.self)))" } ?? ""
    return "\(direction) close \(code.rawValue)\(text) at \(time)"
  }
}
