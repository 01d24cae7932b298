import Foundation
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `stub-server` command serves a bundle's WebSocket scripts to a real client.
@Suite struct StubServerWebSocketTests {
  @Test(
    .enabled(
      if: StubServerCommandTests.stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"),
    .enabled(if: pythonWebSocketsAvailable, pythonWebSocketsMissing))
  func aBundlesWebSocketScriptTalksToAPythonClient() async throws {
    let temporary = try TemporaryFolder("stub-server-websocket")
    var bundle = MockBundle()
    bundle.stub(
      .get("/chat"),
      with: .webSocket(
        subprotocol: "chat",
        [
          .send(.string("welcome")), .receive(.string("hi")), .send(.data(Data([1, 2]))),
          .close(.normalClosure, reason: "bye"),
        ]))
    let folder = temporary.url.appendingPathComponent("api", isDirectory: true)
    try bundle.write(to: folder)
    let written = try String(
      contentsOf: folder.appendingPathComponent("bundle.json"), encoding: .utf8)
    #expect(written.contains("\"webSocket\""), "\(written)")

    let server = try ChildProcess(
      try #require(StubServerCommandTests.stubServer),
      ["--exit-with-parent", folder.path, "--port", "0"], environment: cleanEnvironment())
    defer { server.stop() }
    let first = try #require(await server.line(), "no first line; stderr: \(server.errorText)")
    let base = try #require(URL(string: first.replacingOccurrences(of: "http://", with: "ws://")))
    let output = try await runWebSocketClient(
      """
      with connect(url, subprotocols=["chat"], open_timeout=600) as ws:
          print("subprotocol", ws.subprotocol)
          print("first", ws.recv(timeout=600))
          ws.send("hi")
          print("second", list(ws.recv(timeout=600)))
          closed(ws)
      """, base.appendingPathComponent("chat"))
    #expect(
      output == "subprotocol chat\nfirst welcome\nsecond [1, 2]\nclosed 1000 bye\n", "\(output)")
    let line = try #require(await server.line())
    #expect(line.hasPrefix("GET /chat 101 "), "\(line)")
    server.send(SIGTERM)
    #expect(await server.exit() == 0, "stderr: \(server.errorText)")
  }
}
