import Foundation

// The loopback server's WebSocket frame parser and message assembler (with the
// HTTPSessionServer sources), and the opening handshake's checks.
//
// Input: the first byte picks where the rest is cut into pieces (its value is a stride; 0
// feeds the bytes whole) and, by its low bit, the message limit (64 bytes or 64 KiB); the
// rest is what a client sends after the handshake.

/// One input for libFuzzer: a stride and the bytes, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  guard count > 0 else { return 0 }
  let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
  let stride = Int(bytes[0] >> 1)
  let limit = bytes[0] & 1 == 0 ? 64 : 64 * 1024
  let body = Array(bytes.dropFirst())
  let whole = read(body, stride: 0, limit: limit)
  let cut = read(body, stride: stride, limit: limit)
  check(whole.frames == cut.frames, "cutting every \(stride) bytes changed the frames")
  check(whole.error == cut.error, "cutting every \(stride) bytes changed the error")
  if let error = whole.error {
    check([1002, 1007, 1009].contains(error.closeCode), "close code \(error.closeCode)")
  }
  for frame in whole.frames {
    check(frame.payload.count <= limit, "a frame over the limit was accepted")
    check(!frame.opcode.isControl || (frame.fin && frame.payload.count <= 125), "control frame")
    var again = WebSocketFrameParser(maximumFrameSize: limit)
    again.append(frame.encoded(mask: (0x12, 0x34, 0x56, 0x78)))
    check((try? again.next()) == frame, "an accepted frame did not encode and read back")
  }
  assemble(whole.frames, limit: limit)
  handshake(String(decoding: body, as: UTF8.self))
  return 0
}

func read(_ body: [UInt8], stride: Int, limit: Int) -> (
  frames: [WebSocketFrame], error: WebSocketProtocolError?
) {
  var parser = WebSocketFrameParser(maximumFrameSize: limit)
  var frames: [WebSocketFrame] = []
  let pieces =
    stride == 0
    ? [body[...]]
    : Swift.stride(from: 0, to: body.count, by: stride).map {
      body[$0..<min($0 + stride, body.count)]
    }
  do {
    for piece in pieces {
      parser.append(piece)
      while let frame = try parser.next() { frames.append(frame) }
    }
  } catch {
    return (frames, error)
  }
  return (frames, nil)
}

/// Messages never exceed the limit; text is valid UTF-8; close codes are ones a peer may send.
func assemble(_ frames: [WebSocketFrame], limit: Int) {
  var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
  for frame in frames {
    guard let event = try? assembler.add(frame) else { continue }
    switch event {
    case .text(let text):
      check(text.utf8.count <= limit, "a text message over the limit")
    case .binary(let data):
      check(data.count <= limit, "a binary message over the limit")
    case .close(let code, _):
      if let code { check(WebSocketMessageAssembler.isValidCloseCode(code), "close \(code)") }
    case .ping, .pong:
      break
    }
  }
}

/// Header values from the input: validation never traps, and what it accepts has a key that
/// decodes to 16 bytes and an accept value of 28 characters.
func handshake(_ text: String) {
  let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  let names = ["upgrade", "connection", "sec-websocket-version", "sec-websocket-key"]
  var headers: [String: String] = [:]
  for (index, name) in names.enumerated() where index < lines.count { headers[name] = lines[index] }
  if case .success(let request) = WebSocketHandshake.validate(
    method: "GET", header: { headers[$0.lowercased()] })
  {
    check(Data(base64Encoded: request.key)?.count == 16, "an accepted key is not 16 bytes")
    check(WebSocketHandshake.accept(forKey: request.key).count == 28, "an accept value")
  }
}
