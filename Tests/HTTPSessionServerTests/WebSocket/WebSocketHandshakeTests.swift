import Foundation
import Testing

@testable import HTTPSessionServer

/// The opening handshake: RFC 6455's own accept example, SHA-1's test vectors, which requests
/// upgrade and why others are refused, and the subprotocol answer.
@Suite struct WebSocketHandshakeTests {
  private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
  }

  @Test func sha1MatchesItsTestVectors() {
    #expect(hex(SHA1.digest([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(
      hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
        == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    #expect(
      hex(SHA1.digest(Array(repeating: UInt8(ascii: "a"), count: 1_000_000)))
        == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
  }

  @Test func theAcceptValueIsTheRFCsExample() {
    #expect(
      WebSocketHandshake.accept(forKey: "dGhlIHNhbXBsZSBub25jZQ==")
        == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
  }

  private let upgrade: [String: String] = [
    "upgrade": "websocket", "connection": "keep-alive, Upgrade", "sec-websocket-version": "13",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-protocol": "chat, superchat",
  ]

  private func validate(_ headers: [String: String], method: String = "GET")
    -> Result<WebSocketHandshake.Request, WebSocketHandshake.Refusal>
  {
    WebSocketHandshake.validate(method: method) { headers[$0.lowercased()] }
  }

  @Test func aValidUpgradeGivesTheKeyAndTheOfferedProtocols() throws {
    let request = try validate(upgrade).get()
    #expect(request.key == "dGhlIHNhbXBsZSBub25jZQ==")
    #expect(request.protocols == ["chat", "superchat"])
    #expect(WebSocketHandshake.negotiate("chat", offered: request.protocols) == "chat")
    #expect(WebSocketHandshake.negotiate("Chat", offered: request.protocols) == nil)
    #expect(WebSocketHandshake.negotiate(nil, offered: request.protocols) == nil)
  }

  @Test func eachMissingPartIsRefusedSayingWhich() {
    func refusal(_ change: (inout [String: String]) -> Void, method: String = "GET")
      -> WebSocketHandshake.Refusal?
    {
      var headers = upgrade
      change(&headers)
      if case .failure(let refusal) = validate(headers, method: method) { return refusal }
      return nil
    }
    #expect(refusal({ _ in }, method: "POST")?.reason.contains("GET") == true)
    #expect(refusal({ $0["upgrade"] = "h2c" })?.reason.contains("Upgrade") == true)
    #expect(refusal({ $0["connection"] = "close" })?.reason.contains("Connection") == true)
    #expect(refusal({ $0["sec-websocket-version"] = "8" })?.status == 426)
    #expect(refusal({ $0["sec-websocket-key"] = "c2hvcnQ=" })?.reason.contains("16 bytes") == true)
    #expect(refusal({ $0["sec-websocket-key"] = nil })?.status == 400)
  }
}
