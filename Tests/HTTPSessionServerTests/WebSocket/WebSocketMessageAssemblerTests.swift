import Foundation
import Testing

@testable import HTTPSessionServer

/// Frames into messages: fragments joined with control frames between them, text checked as
/// UTF-8, close frames checked, the message limit kept.
@Suite struct WebSocketMessageAssemblerTests {
  private func events(_ frames: [WebSocketFrame], limit: Int = 1024) throws(WebSocketProtocolError)
    -> [WebSocketMessageAssembler.Event]
  {
    var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
    var found: [WebSocketMessageAssembler.Event] = []
    for frame in frames { if let event = try assembler.add(frame) { found.append(event) } }
    return found
  }

  private func closeCode(_ frames: [WebSocketFrame], limit: Int = 1024) -> UInt16? {
    do {
      _ = try events(frames, limit: limit)
      return nil
    } catch {
      return error.closeCode
    }
  }

  @Test func fragmentsJoinAndControlFramesPassBetweenThem() throws {
    #expect(
      try events([
        WebSocketFrame(fin: false, .text, Array("Hel".utf8)),
        WebSocketFrame(.ping, [7]),
        WebSocketFrame(fin: false, .continuation, Array("l".utf8)),
        WebSocketFrame(.continuation, Array("o".utf8)),
        WebSocketFrame(.binary, [1, 2]),
      ]) == [.ping([7]), .text("Hello"), .binary([1, 2])])
  }

  @Test func textMayHoldNULAndMustBeUTF8() throws {
    #expect(try events([WebSocketFrame(.text, [0x61, 0x00, 0x62])]) == [.text("a\u{0}b")])
    #expect(closeCode([WebSocketFrame(.text, [0x61, 0xFF])]) == 1007)
    // A character split across fragments is whole in the message.
    let bytes = Array("é".utf8)
    #expect(
      try events([
        WebSocketFrame(fin: false, .text, [bytes[0]]), WebSocketFrame(.continuation, [bytes[1]]),
      ]) == [.text("é")])
  }

  @Test func fragmentsOutOfOrderAreProtocolErrors() {
    #expect(closeCode([WebSocketFrame(.continuation, [1])]) == 1002)
    #expect(
      closeCode([WebSocketFrame(fin: false, .text, [0x61]), WebSocketFrame(.binary, [1])]) == 1002)
  }

  @Test func aMessageOverTheLimitIs1009EvenInFragments() {
    #expect(closeCode([WebSocketFrame(.binary, Array(repeating: 0, count: 11))], limit: 10) == 1009)
    #expect(
      closeCode(
        [
          WebSocketFrame(fin: false, .binary, Array(repeating: 0, count: 6)),
          WebSocketFrame(.continuation, Array(repeating: 0, count: 5)),
        ], limit: 10) == 1009)
    #expect(closeCode([WebSocketFrame(.binary, Array(repeating: 0, count: 10))], limit: 10) == nil)
  }

  @Test func closeFramesCarryAValidCodeAndUTF8Reason() throws {
    #expect(try events([WebSocketFrame.close(nil)]) == [.close(code: nil, reason: "")])
    #expect(
      try events([WebSocketFrame.close(1001, reason: Array("bye".utf8))]) == [
        .close(code: 1001, reason: "bye")
      ])
    #expect(closeCode([WebSocketFrame(.close, [0x03])]) == 1002, "a one-byte payload")
    for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 2999, 5000] {
      #expect(closeCode([WebSocketFrame.close(code)]) == 1002, "code \(code)")
    }
    for code: UInt16 in [1000, 1003, 1007, 1011, 3000, 4999] {
      #expect(closeCode([WebSocketFrame.close(code)]) == nil, "code \(code)")
    }
    #expect(closeCode([WebSocketFrame.close(1000, reason: [0xC3])]) == 1007)
  }
}
