/// One WebSocket frame (RFC 6455 §5.2): its FIN bit, opcode and unmasked payload.
struct WebSocketFrame: Sendable, Equatable {
  /// What a frame carries (RFC 6455 §5.2, §11.8).
  enum Opcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: never fragmented, at most 125 bytes of payload.
    var isControl: Bool { rawValue & 0x8 != 0 }
  }

  var fin: Bool
  var opcode: Opcode
  var payload: [UInt8]

  init(fin: Bool = true, _ opcode: Opcode, _ payload: [UInt8] = []) {
    self.fin = fin
    self.opcode = opcode
    self.payload = payload
  }

  /// A close frame with `code` and a UTF-8 `reason` (RFC 6455 §5.5.1); no code, no payload.
  static func close(_ code: UInt16?, reason: [UInt8] = []) -> WebSocketFrame {
    guard let code else { return WebSocketFrame(.close) }
    return WebSocketFrame(.close, [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)] + reason)
  }

  /// The frame as bytes on the wire: unmasked, as a server sends it, or masked with the four
  /// bytes of `mask`, as a client must.
  func encoded(mask: (UInt8, UInt8, UInt8, UInt8)? = nil) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode.rawValue]
    bytes.reserveCapacity(payload.count + 14)
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    switch payload.count {
    case 0...125:
      bytes.append(maskBit | UInt8(payload.count))
    case 126...0xFFFF:
      bytes.append(maskBit | 126)
      bytes += [UInt8(payload.count >> 8), UInt8(truncatingIfNeeded: payload.count)]
    default:
      bytes.append(maskBit | 127)
      let length = UInt64(payload.count)
      for shift in stride(from: 56, through: 0, by: -8) {
        bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
      }
    }
    guard let mask else { return bytes + payload }
    let key = [mask.0, mask.1, mask.2, mask.3]
    bytes += key
    for (index, byte) in payload.enumerated() { bytes.append(byte ^ key[index & 3]) }
    return bytes
  }
}

/// Why a peer's bytes break the protocol, with the close code to answer them with.
struct WebSocketProtocolError: Error, Equatable, CustomStringConvertible {
  /// The status code of the close frame that answers it: 1002 (protocol error), 1007
  /// (invalid text) or 1009 (too big).
  let closeCode: UInt16
  /// What was wrong, for the close frame's reason and the reports.
  let description: String

  static func protocolError(_ why: String) -> WebSocketProtocolError {
    WebSocketProtocolError(closeCode: 1002, description: why)
  }
}

/// Reads frames from the bytes a client sends, as they arrive (RFC 6455 §5.2): client frames
/// must be masked, reserved bits must be clear, opcodes must be known, control frames must be
/// whole and at most 125 bytes, and no frame may be longer than the limit.
struct WebSocketFrameParser: Sendable {
  /// The longest payload a frame may have, in bytes.
  let maximumFrameSize: Int
  /// Whether frames must be masked (frames from a client must; a server's must not be).
  let requiresMask: Bool
  private var buffer: [UInt8] = []
  private var start = 0

  init(maximumFrameSize: Int, requiresMask: Bool = true) {
    self.maximumFrameSize = max(0, maximumFrameSize)
    self.requiresMask = requiresMask
  }

  /// Adds bytes that arrived.
  mutating func append(_ bytes: some Sequence<UInt8>) {
    if start > 0 && start >= buffer.count / 2 {
      buffer.removeFirst(start)
      start = 0
    }
    buffer.append(contentsOf: bytes)
  }

  /// The next whole frame, `nil` when more bytes are needed, or the error that breaks the
  /// protocol (after which the connection must close; the parser stays failed).
  mutating func next() throws(WebSocketProtocolError) -> WebSocketFrame? {
    let available = buffer.count - start
    guard available >= 2 else { return nil }
    let first = buffer[start]
    let second = buffer[start + 1]
    if first & 0x70 != 0 {
      throw .protocolError("a frame has reserved bits set, and no extension was negotiated")
    }
    guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
      throw .protocolError("a frame has the unknown opcode \(first & 0x0F)")
    }
    let fin = first & 0x80 != 0
    let masked = second & 0x80 != 0
    if requiresMask && !masked { throw .protocolError("a client frame is not masked") }
    if !requiresMask && masked { throw .protocolError("a server frame is masked") }
    var offset = 2
    var length = UInt64(second & 0x7F)
    if length == 126 {
      guard available >= 4 else { return nil }
      length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
      offset = 4
    } else if length == 127 {
      guard available >= 10 else { return nil }
      length = 0
      for index in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + index]) }
      if length >> 63 != 0 {
        throw .protocolError("a frame's 64-bit length has its most significant bit set")
      }
      offset = 10
    }
    if opcode.isControl {
      if !fin { throw .protocolError("a control frame is fragmented") }
      if length > 125 { throw .protocolError("a control frame is longer than 125 bytes") }
    }
    if length > UInt64(maximumFrameSize) {
      throw WebSocketProtocolError(
        closeCode: 1009,
        description: "a frame of \(length) bytes is longer than the limit, \(maximumFrameSize)")
    }
    let maskOffset = offset
    if masked { offset += 4 }
    // Compared before any sum: with a limit near Int.max, offset + length would overflow.
    guard available >= offset, UInt64(available - offset) >= length else { return nil }
    let size = Int(length)
    var payload = Array(buffer[(start + offset)..<(start + offset + size)])
    if masked {
      let key = buffer[(start + maskOffset)..<(start + maskOffset + 4)].map { $0 }
      for index in payload.indices { payload[index] ^= key[index & 3] }
    }
    start += offset + size
    return WebSocketFrame(fin: fin, opcode, payload)
  }
}
