import Foundation
import Testing

@testable import HTTPSessionServer

/// RFC 6455 framing: the examples of §5.7, the three length encodings, masking, and every rule
/// that makes a client's frame a protocol error, however the bytes arrive.
@Suite struct WebSocketFrameTests {
  private func frames(
    _ bytes: [UInt8], limit: Int = 1 << 20, requiresMask: Bool = true, cutEvery stride: Int = 0
  ) throws(WebSocketProtocolError) -> [WebSocketFrame] {
    var parser = WebSocketFrameParser(maximumFrameSize: limit, requiresMask: requiresMask)
    var found: [WebSocketFrame] = []
    let pieces =
      stride == 0
      ? [bytes[...]]
      : Swift.stride(from: 0, to: bytes.count, by: stride).map {
        bytes[$0..<min($0 + stride, bytes.count)]
      }
    for piece in pieces {
      parser.append(piece)
      while let frame = try parser.next() { found.append(frame) }
    }
    return found
  }

  private func error(_ bytes: [UInt8], limit: Int = 1 << 20) -> WebSocketProtocolError? {
    do {
      _ = try frames(bytes, limit: limit)
      return nil
    } catch {
      return error
    }
  }

  private let hello = Array("Hello".utf8)

  @Test func theRFCsExamplesReadAsTheRFCSays() throws {
    // §5.7: a single-frame unmasked text message, as a server sends it.
    #expect(
      try frames([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F], requiresMask: false) == [
        WebSocketFrame(.text, hello)
      ])
    // A single-frame masked text message, as a client sends it.
    #expect(
      try frames([0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]) == [
        WebSocketFrame(.text, hello)
      ])
    // A fragmented unmasked text message.
    #expect(
      try frames([0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F], requiresMask: false) == [
        WebSocketFrame(fin: false, .text, Array("Hel".utf8)),
        WebSocketFrame(.continuation, Array("lo".utf8)),
      ])
  }

  @Test func theServerWritesTheRFCsBytes() {
    #expect(WebSocketFrame(.text, hello).encoded() == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
    #expect(
      WebSocketFrame(.text, hello).encoded(mask: (0x37, 0xFA, 0x21, 0x3D)) == [
        0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58,
      ])
    #expect(
      Array(WebSocketFrame(.binary, Array(repeating: 0, count: 256)).encoded().prefix(4)) == [
        0x82, 0x7E, 0x01, 0x00,
      ])
    #expect(
      Array(WebSocketFrame(.binary, Array(repeating: 0, count: 65536)).encoded().prefix(10)) == [
        0x82, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
      ])
    #expect(
      WebSocketFrame.close(1000, reason: Array("done".utf8)).encoded() == [0x88, 0x06, 0x03, 0xE8]
        + Array("done".utf8))
  }

  @Test func everyLengthEncodingReadsBackWhateverTheCuts() throws {
    for size in [0, 1, 125, 126, 127, 65535, 65536, 70000] {
      let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
      let frame = WebSocketFrame(.binary, payload)
      let bytes = frame.encoded(mask: (1, 2, 3, 4))
      #expect(try frames(bytes) == [frame], "\(size) bytes whole")
      #expect(try frames(bytes, cutEvery: 7) == [frame], "\(size) bytes in pieces of 7")
    }
    let two =
      WebSocketFrame(.text, hello).encoded(mask: (9, 8, 7, 6))
      + WebSocketFrame(.ping, [1]).encoded(mask: (5, 4, 3, 2))
    #expect(try frames(two, cutEvery: 1).map(\.opcode) == [.text, .ping])
  }

  @Test func aFrameArrivesOnlyWhenItIsWhole() throws {
    let bytes = WebSocketFrame(.text, hello).encoded(mask: (1, 2, 3, 4))
    var parser = WebSocketFrameParser(maximumFrameSize: 100)
    for byte in bytes.dropLast() {
      parser.append([byte])
      #expect(try parser.next() == nil)
    }
    parser.append([bytes.last!])
    #expect(try parser.next() == WebSocketFrame(.text, hello))
    #expect(try parser.next() == nil)
  }

  @Test func anUnmaskedClientFrameIsAProtocolError() {
    #expect(error([0x81, 0x05] + hello)?.closeCode == 1002)
    #expect(error([0x81, 0x05] + hello)?.description.contains("not masked") == true)
  }

  @Test func reservedBitsAndUnknownOpcodesAreProtocolErrors() {
    for first: UInt8 in [0xC1, 0xA1, 0x91, 0x83, 0x8B, 0x87] {
      #expect(error([first, 0x80, 0, 0, 0, 0])?.closeCode == 1002, "first byte \(first)")
    }
  }

  @Test func controlFramesMustBeWholeAndShort() {
    // A ping without FIN.
    #expect(error([0x09, 0x80, 0, 0, 0, 0])?.description.contains("fragmented") == true)
    // A close of 126 bytes.
    #expect(error([0x88, 0xFE, 0x00, 0x7E])?.description.contains("125") == true)
  }

  @Test func aFrameOverTheLimitIs1009BeforeItsPayloadArrives() {
    let head: [UInt8] = [0x82, 0xFF, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF]
    #expect(error(head, limit: 1 << 20)?.closeCode == 1009)
    #expect(error([0x82, 0xFE, 0x04, 0x01], limit: 1024)?.closeCode == 1009)
    #expect(error([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0])?.closeCode == 1002, "the top bit")
  }

  @Test func theLongestLengthUnderALimitOfIntMaxWaitsForItsBytes() throws {
    // 2^63 - 1 bytes announced, with a mask: the parser waits for them rather than adding the
    // length to the header's size, which would overflow.
    let head: [UInt8] = [0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4]
    #expect(try frames(head + hello, limit: .max).isEmpty)
    #expect(try frames(head + hello, limit: .max, cutEvery: 3).isEmpty)
  }
}
