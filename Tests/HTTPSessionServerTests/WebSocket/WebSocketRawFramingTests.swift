import Foundation
import HTTPSessionMocks
import Testing

@testable import HTTPSessionServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a polite client never sends, over a raw socket: refused handshakes, unmasked and
/// reserved-bit frames, a stray continuation, frames that come with the upgrade request; and
/// the server's own ping, read as bytes.
@Suite struct WebSocketRawFramingTests {
  /// RFC 6455's example key, whose accept value is in §1.3.
  private static let key = "dGhlIHNhbXBsZSBub25jZQ=="

  private func upgrade(_ path: String, extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      + "Sec-WebSocket-Key: \(Self.key)\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n"
  }

  private func masked(_ frame: WebSocketFrame) -> [UInt8] {
    frame.encoded(mask: (0x37, 0xFA, 0x21, 0x3D))
  }

  /// Opens a WebSocket on `path` with `first` sent along with the upgrade request.
  private func open(_ server: LoopbackServer, _ path: String, with first: [UInt8] = [])
    throws -> RawClient
  {
    let client = try RawClient(port: server.port)
    client.send(Array(upgrade(path).utf8) + first)
    let head = try #require(client.readHead())
    #expect(head.status == 101)
    #expect(head.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    #expect(head.headers["upgrade"]?.lowercased() == "websocket")
    return client
  }

  /// The next frame the server sends; nil if the connection closed first.
  private func frame(from client: RawClient) -> WebSocketFrame? {
    guard let start = client.readBytes(2) else { return nil }
    var length = Int(start[1] & 0x7F)
    if length == 126 {
      guard let bytes = client.readBytes(2) else { return nil }
      length = Int(bytes[0]) << 8 | Int(bytes[1])
    } else if length == 127 {
      guard let bytes = client.readBytes(8) else { return nil }
      length = bytes.reduce(0) { $0 << 8 | Int($1) }
    }
    guard let payload = client.readBytes(length),
      let opcode = WebSocketFrame.Opcode(rawValue: start[0] & 0x0F)
    else { return nil }
    return WebSocketFrame(fin: start[0] & 0x80 != 0, opcode, payload)
  }

  /// The close code of the frame the server answers with, and whether it then closed.
  private func closeCode(from client: RawClient) -> UInt16? {
    guard let frame = frame(from: client), frame.opcode == .close, frame.payload.count >= 2
    else { return nil }
    return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
  }

  private func server(_ script: [WebSocketStep], admin: Bool = false) throws -> (
    URLSessionMock, LoopbackServer
  ) {
    let mock = URLSessionMock()
    mock.stub(.get("/ws"), with: .webSocket(script))
    return (mock, try mock.startServer(admin: admin))
  }

  @Test func anUnmaskedFrameClosesWith1002() throws {
    let (mock, server) = try server([.receive()])
    defer { server.stop() }
    let client = try open(server, "/ws")
    client.send(WebSocketFrame(.text, Array("plain".utf8)).encoded())
    #expect(closeCode(from: client) == 1002)
    #expect(mock.webSocketCloses(for: .get("/ws")).first?.code == .protocolError)
  }

  @Test func aFrameWithReservedBitsClosesWith1002() throws {
    let (_, server) = try server([.receive(nil)])
    defer { server.stop() }
    let client = try open(server, "/ws")
    var bytes = masked(WebSocketFrame(.text, Array("rsv".utf8)))
    bytes[0] |= 0x40
    client.send(bytes)
    #expect(closeCode(from: client) == 1002)
  }

  @Test func aContinuationWithNothingToContinueClosesWith1002() throws {
    let (mock, server) = try server([.receive(nil)])
    defer { server.stop() }
    let client = try open(server, "/ws")
    client.send(masked(WebSocketFrame(.continuation, Array("stray".utf8))))
    #expect(closeCode(from: client) == 1002)
    // The server waits for the client's close, then closes the socket.
    client.send(masked(.close(1002)))
    #expect(client.closedWithoutData())
    #expect(mock.webSocketMessages(for: .get("/ws")).isEmpty)
  }

  @Test func framesSentWithTheUpgradeRequestAreRead() throws {
    let (mock, server) = try server([.receive(.string("early")), .send(.string("seen"))])
    defer { server.stop() }
    let client = try open(server, "/ws", with: masked(WebSocketFrame(.text, Array("early".utf8))))
    #expect(frame(from: client) == WebSocketFrame(.text, Array("seen".utf8)))
    #expect(mock.webSocketMessages(for: .get("/ws")).count == 2)
  }

  @Test func theScriptsPingAndCloseGoOutAsFramesAndTheClientsPingIsAnswered() throws {
    let (mock, server) = try server([
      .ping, .receive(.string("after pong")), .close(.goingAway, reason: "bye"),
    ])
    defer { server.stop() }
    let client = try open(server, "/ws")
    #expect(frame(from: client) == WebSocketFrame(.ping))
    client.send(masked(WebSocketFrame(.pong)))
    client.send(masked(WebSocketFrame(.ping, [1, 2, 3])))
    #expect(frame(from: client) == WebSocketFrame(.pong, [1, 2, 3]))
    client.send(masked(WebSocketFrame(.text, Array("after pong".utf8))))
    #expect(frame(from: client) == .close(1001, reason: Array("bye".utf8)))
    client.send(masked(.close(1001)))
    #expect(client.closedWithoutData())
    #expect(mock.webSocketCloses(for: .get("/ws")).map(\.direction) == [.fromServer, .fromClient])
  }

  /// A client that goes quiet is pinged after half the idle timeout; its pong keeps the
  /// connection, and silence after the next ping closes it with 1001, so idle sockets cannot
  /// hold every connection slot. (Each wait ends on the server's frame; the socket's 5 s
  /// receive timeout only bounds a broken server.)
  @Test func anIdleClientIsPingedThenClosedWith1001() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/ws"), with: .webSocket([.send(.string("hello"))]))
    let server = try mock.startServer(limits: ServerLimits(webSocketIdleTimeout: .seconds(2)))
    defer { server.stop() }
    let client = try open(server, "/ws")
    #expect(frame(from: client) == WebSocketFrame(.text, Array("hello".utf8)))
    #expect(frame(from: client) == WebSocketFrame(.ping))
    client.send(masked(WebSocketFrame(.pong)))
    #expect(frame(from: client) == WebSocketFrame(.ping))
    let close = try #require(frame(from: client))
    #expect(close.opcode == .close)
    #expect(close.payload.prefix(2) == [0x03, 0xE9])  // 1001, going away
    #expect(String(decoding: close.payload.dropFirst(2), as: UTF8.self).hasPrefix("no frame"))
    client.send(masked(.close(1001)))
    #expect(client.closedWithoutData())
    #expect(mock.webSocketCloses(for: .get("/ws")).map(\.direction).first == .fromServer)
  }

  @Test func aCloseWithoutACodeIsEchoedWithoutOne() throws {
    let (mock, server) = try server([.receive(nil)])
    defer { server.stop() }
    let client = try open(server, "/ws")
    client.send(masked(.close(nil)))
    #expect(frame(from: client) == .close(nil))
    #expect(client.closedWithoutData())
    #expect(mock.webSocketCloses(for: .get("/ws")).first?.code == .noStatusReceived)
  }

  @Test func aBadHandshakeIsRefusedWithWhatIsWrong() throws {
    let (mock, server) = try server([.send(.string("never"))])
    defer { server.stop() }
    let noKey = try rawExchange(
      port: server.port,
      "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Version: 13\r\n\r\n")
    #expect(noKey.hasPrefix("HTTP/1.1 400 "), "\(noKey)")
    #expect(noKey.contains("Sec-WebSocket-Key is not 16 bytes in base64"), "\(noKey)")
    let oldVersion = try rawExchange(
      port: server.port,
      "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: \(Self.key)\r\nSec-WebSocket-Version: 8\r\n\r\n")
    #expect(oldVersion.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"), "\(oldVersion)")
    #expect(oldVersion.contains("Sec-WebSocket-Version: 13\r\n"), "\(oldVersion)")
    let noConnection = try rawExchange(
      port: server.port,
      "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        + "Sec-WebSocket-Key: \(Self.key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
    #expect(noConnection.hasPrefix("HTTP/1.1 400 "), "\(noConnection)")
    #expect(noConnection.contains("Connection does not name upgrade"), "\(noConnection)")
    #expect(mock.webSocketMessages(for: .get("/ws")).isEmpty)
  }

  /// With the admin API on, the admin handler stands in front of the mock's: the refusal
  /// must pass through it to the journal all the same.
  @Test(arguments: [false, true])
  func aRefusedHandshakeIsAnExchangeInTheJournal(admin: Bool) throws {
    let (mock, server) = try server([.send(.string("never"))], admin: admin)
    defer { server.stop() }
    let oldVersion = try rawExchange(
      port: server.port,
      "GET /ws?room=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        + "Connection: Upgrade\r\nSec-WebSocket-Key: \(Self.key)\r\n"
        + "Sec-WebSocket-Version: 8\r\n\r\n")
    #expect(oldVersion.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"), "\(oldVersion)")
    // The door answered the request itself: the journal has it, as the client saw it, and
    // no stub was asked (so no unmatched-request report either).
    #expect(mock.requests.map { $0.url?.path } == ["/ws"])
    #expect(mock.unmatchedRequests.isEmpty)
    let exchange = try #require(mock.exchanges.first)
    #expect(mock.exchanges.count == 1)
    #expect(exchange.door == .server)
    #expect(exchange.request.url?.query == "room=1")
    #expect(exchange.request.value(forHTTPHeaderField: "Sec-WebSocket-Version") == "8")
    let response = try #require(exchange.response as? HTTPURLResponse)
    #expect(response.statusCode == 426)
    #expect(response.value(forHTTPHeaderField: "Sec-WebSocket-Version") == "13")
    #expect(response.value(forHTTPHeaderField: "Connection") == "close")
    let body = String(decoding: exchange.body ?? Data(), as: UTF8.self)
    #expect(oldVersion.hasSuffix("\r\n\r\n" + body), "\(oldVersion)")
    #expect(body.contains("Sec-WebSocket-Version"), "\(body)")
    #expect(mock.webSocketMessages(for: .get("/ws")).isEmpty)
  }

  @Test func aPlainGetToAWebSocketStubGets426OnTheWire() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/echo"), with: .webSocket([.send(.string("hi"))]))
    let server = try mock.startServer()
    defer { server.stop() }
    let (data, response) = try await liveSession().data(
      from: server.baseURL.appendingPathComponent("echo"))
    let http = try #require(response as? HTTPURLResponse)
    #expect(http.statusCode == 426)
    #expect(http.value(forHTTPHeaderField: "Upgrade") == "websocket")
    #expect(text(data).contains("426 Upgrade Required"))
  }
}
