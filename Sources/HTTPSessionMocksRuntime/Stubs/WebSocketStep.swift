import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One step of a stub's WebSocket script: what the server does next.
///
/// A script (``StubResponse/webSocket(subprotocol:_:)``) runs its steps in order once the
/// client's upgrade is accepted. A step that sends runs at once; ``receive(_:)`` waits for the
/// client's next message and ``wait(_:)`` for the mock's clock.
///
/// ```swift
/// mock.stub(.get("/chat"), with: .webSocket([
///   .send(.string("welcome")),
///   .receive(.string("hello")),
///   .wait(.seconds(1)),
///   .send(.data(Data([1, 2, 3]))),
///   .close(.normalClosure, reason: "bye"),
/// ]))
/// ```
///
/// When the script runs out without closing, the connection stays open: the client's further
/// messages are recorded, and nothing more is sent.
public struct WebSocketStep: Sendable, Equatable, CustomStringConvertible {
  enum Kind: Sendable, Equatable {
    case send(WebSocketPayload)
    case receive(WebSocketPayload?)
    case wait(Duration)
    case ping
    case close(code: Int, reason: String?)
    case drop
  }

  let kind: Kind

  init(_ kind: Kind) { self.kind = kind }

  /// Sends `message` to the client.
  public static func send(_ message: URLSessionWebSocketTask.Message) -> WebSocketStep {
    WebSocketStep(.send(WebSocketPayload(message)))
  }

  /// Waits for the client's next message; with a value, the message must be that one.
  ///
  /// A different message fails the test with a report that names both (as a request no stub
  /// matches does), and the server closes the socket with code 1008 (policy violation), so
  /// that the client's next `receive()` fails instead of waiting for ever. `nil` (or no
  /// argument, `.receive()`) takes any message.
  public static func receive(_ message: URLSessionWebSocketTask.Message? = nil) -> WebSocketStep {
    WebSocketStep(.receive(message.map(WebSocketPayload.init)))
  }

  /// Waits `duration` on the mock's clock (a ``VirtualClock`` moves only when the test
  /// advances it).
  ///
  /// A wait right after a `send` is on the clock before that message leaves, on every door:
  /// once the client has the message, the test can advance the clock past the wait.
  public static func wait(_ duration: Duration) -> WebSocketStep {
    WebSocketStep(.wait(duration))
  }

  /// Sends a ping; the client answers it with a pong by itself. The script goes on at once.
  public static var ping: WebSocketStep { WebSocketStep(.ping) }

  /// Closes the connection with `code` and `reason`: the client's `receive()` then fails and
  /// its `closeCode` and `closeReason` are these. Nothing after it runs.
  public static func close(
    _ code: URLSessionWebSocketTask.CloseCode, reason: String? = nil
  ) -> WebSocketStep {
    WebSocketStep(.close(code: code.rawValue, reason: reason))
  }

  /// Breaks the connection without a close: the client sees the connection lost. Nothing
  /// after it runs.
  public static var drop: WebSocketStep { WebSocketStep(.drop) }

  /// The step as it is written in code, such as `.receive(.string("hi"))`.
  public var description: String {
    switch kind {
    case .send(let payload): return ".send(\(payload))"
    case .receive(let payload?): return ".receive(\(payload))"
    case .receive(nil): return ".receive(nil)"
    case .wait(let duration): return ".wait(\(duration))"
    case .ping: return ".ping"
    case .close(let code, let reason?): return ".close(\(code), reason: \"\(reason)\")"
    case .close(let code, nil): return ".close(\(code))"
    case .drop: return ".drop"
    }
  }
}

/// A WebSocket message as a value: text or binary, comparable and printable (Foundation's
/// `URLSessionWebSocketTask.Message` is neither).
struct WebSocketPayload: Sendable, Hashable, CustomStringConvertible {
  enum Form: Sendable, Hashable {
    case text(String)
    case binary(Data)
  }

  let form: Form

  init(_ message: URLSessionWebSocketTask.Message) {
    switch message {
    case .string(let text): form = .text(text)
    case .data(let data): form = .binary(data)
    @unknown default: form = .binary(Data())
    }
  }

  init(text: String) { form = .text(text) }
  init(binary: Data) { form = .binary(binary) }

  var message: URLSessionWebSocketTask.Message {
    switch form {
    case .text(let text): return .string(text)
    case .binary(let data): return .data(data)
    }
  }

  /// The payload's size in bytes (UTF-8 for text).
  var byteCount: Int {
    switch form {
    case .text(let text): return text.utf8.count
    case .binary(let data): return data.count
    }
  }

  /// The payload cut to its first `maxBytes` bytes (a text at a character's boundary, so
  /// that it stays text): itself when it is no longer.
  func prefix(_ maxBytes: Int) -> WebSocketPayload {
    guard byteCount > maxBytes else { return self }
    switch form {
    case .binary(let data): return WebSocketPayload(binary: Data(data.prefix(max(maxBytes, 0))))
    case .text(let text):
      var kept = String.UnicodeScalarView()
      var bytes = 0
      for scalar in text.unicodeScalars {
        bytes += UTF8.width(scalar)
        guard bytes <= maxBytes else { break }
        kept.append(scalar)
      }
      return WebSocketPayload(text: String(kept))
    }
  }

  /// As code writes it: `.string("hi")`, or `.data(3 bytes: 01 02 03)` (at most 16 bytes
  /// shown).
  var description: String {
    switch form {
    case .text(let text):
      let shown = text.count > 200 ? String(text.prefix(200)) + "…" : text
      return ".string(\(String(reflecting: shown)))"
    case .binary(let data):
      let hex = data.prefix(16).map { String(format: "%02x", $0) }.joined(separator: " ")
      let more = data.count > 16 ? " …" : ""
      return ".data(\(data.count) bytes: \(hex)\(more))"
    }
  }
}
