/// Joins a client's frames into messages (RFC 6455 §5.4, §5.5, §8.1): fragments of one message
/// in order, control frames allowed between them, text checked as UTF-8 (U+0000 included),
/// close frames checked for a valid code and reason, and no message longer than the limit.
struct WebSocketMessageAssembler: Sendable {
  /// What a frame completes.
  enum Event: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// The peer's close frame: its code (`nil` when it had none) and reason.
    case close(code: UInt16?, reason: String)
  }

  /// The longest message, in bytes, after its fragments are joined.
  let maximumMessageSize: Int
  private var pending: [UInt8] = []
  private var pendingOpcode: WebSocketFrame.Opcode?

  init(maximumMessageSize: Int) {
    self.maximumMessageSize = max(0, maximumMessageSize)
  }

  /// The event `frame` completes, `nil` when it is a fragment of a message that goes on, or
  /// the error that breaks the protocol.
  mutating func add(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> Event? {
    switch frame.opcode {
    case .ping: return .ping(frame.payload)
    case .pong: return .pong(frame.payload)
    case .close: return try Self.close(frame.payload)
    case .text, .binary:
      if pendingOpcode != nil {
        throw .protocolError("a new message began before the fragmented one before it ended")
      }
      pendingOpcode = frame.opcode
    case .continuation:
      if pendingOpcode == nil {
        throw .protocolError("a continuation frame came with no fragmented message to continue")
      }
    }
    if frame.payload.count > maximumMessageSize - pending.count {
      throw WebSocketProtocolError(
        closeCode: 1009,
        description: "a message is longer than the limit, \(maximumMessageSize) bytes")
    }
    pending += frame.payload
    guard frame.fin, let opcode = pendingOpcode else { return nil }
    let payload = pending
    pending = []
    pendingOpcode = nil
    if opcode == .binary { return .binary(payload) }
    guard let text = Self.text(payload) else {
      throw WebSocketProtocolError(closeCode: 1007, description: "a text message is not UTF-8")
    }
    return .text(text)
  }

  /// `bytes` as text when they are valid UTF-8, else `nil`.
  static func text(_ bytes: [UInt8]) -> String? {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    var scalars = String.UnicodeScalarView()
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue(let scalar): scalars.append(scalar)
      case .emptyInput: return String(scalars)
      case .error: return nil
      }
    }
  }

  /// Whether a close frame may carry `code` (RFC 6455 §7.4): the defined codes a peer may
  /// send, and the ranges for libraries and applications.
  static func isValidCloseCode(_ code: UInt16) -> Bool {
    switch code {
    case 1000...1003, 1007...1014, 3000...4999: return true
    default: return false
    }
  }

  private static func close(_ payload: [UInt8]) throws(WebSocketProtocolError) -> Event {
    if payload.isEmpty { return .close(code: nil, reason: "") }
    guard payload.count >= 2 else {
      throw .protocolError("a close frame has a one-byte payload; a code takes two")
    }
    let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
    guard isValidCloseCode(code) else {
      throw .protocolError("a close frame has the code \(code), which a peer may not send")
    }
    guard let reason = text(Array(payload.dropFirst(2))) else {
      throw WebSocketProtocolError(
        closeCode: 1007, description: "a close frame's reason is not UTF-8")
    }
    return .close(code: code, reason: reason)
  }
}
