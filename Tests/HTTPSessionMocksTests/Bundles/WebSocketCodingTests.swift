import Foundation
import Testing

@testable import HTTPSessionMocksRuntime

@Suite struct WebSocketCodingTests {
  private func bundle(_ response: String) throws -> MockBundle {
    let json = """
      {"version": 1, "entries": [{"request": {"method": "GET", "url": "/chat"}, "response": \(response)}]}
      """
    return try MockBundle(decodingJSON: Data(json.utf8), source: "bundle.json")
  }

  @Test func aScriptReadFromAFileIsTheScriptWrittenInCode() throws {
    let read = try bundle(
      """
      {"webSocket": {"subprotocol": "chat", "steps": [
        {"send": "welcome"}, {"send": {"base64": "AQID"}}, {"receive": "hi"}, {"receive": null},
        {"wait": "2s"}, "ping", {"close": 1001, "reason": "bye"}, "drop"]}}
      """)
    var written = MockBundle()
    written.stub(
      .get("/chat"),
      with: .webSocket(
        subprotocol: "chat",
        [
          .send(.string("welcome")), .send(.data(Data([1, 2, 3]))), .receive(.string("hi")),
          .receive(nil), .wait(.seconds(2)), .ping, .close(.goingAway, reason: "bye"), .drop,
        ]))
    #expect(read.entries.first?.responses == written.entries.first?.responses)
  }

  @Test(arguments: [
    (#"{"webSocket": {"steps": ["pong"]}}"#, "response.webSocket.steps[0]"),
    (#"{"webSocket": {"steps": [{"sned": "x"}]}}"#, "response.webSocket.steps[0]"),
    (#"{"webSocket": {"steps": [{"close": 99}]}}"#, "response.webSocket.steps[0].close"),
    (#"{"webSocket": {"steps": [{"wait": "-1s"}]}}"#, "response.webSocket.steps[0].wait"),
    (
      #"{"webSocket": {"steps": [{"send": {"base64": "%%"}}]}}"#,
      "response.webSocket.steps[0].send.base64"
    ),
    (#"{"webSocket": {"subprotocol": "a b", "steps": []}}"#, "response.webSocket.subprotocol"),
    (#"{"webSocket": {}}"#, "response.webSocket"),
    (#"{"webSocket": {"steps": []}, "status": 200}"#, "response"),
  ])
  func aBrokenScriptIsRefusedNamingThePlace(_ response: String, _ place: String) throws {
    let error = bundleError { _ = try bundle(response) }
    #expect(error?.path.hasSuffix(place) == true, "\(String(describing: error))")
  }

  @Test func aCloseCodeThePlatformCannotCarryIsRefusedByName() throws {
    let response = #"{"webSocket": {"steps": [{"close": 4000}]}}"#
    #if canImport(FoundationNetworking)
      // corelibs Foundation's CloseCode has no case for 4000: it would arrive as .invalid.
      let error = bundleError { _ = try bundle(response) }
      #expect(error?.path.hasSuffix("response.webSocket.steps[0].close") == true)
      #expect(
        error?.description.contains("close code 4000") == true, "\(String(describing: error))")
    #else
      // Apple's CloseCode carries any code.
      #expect(try bundle(response).count == 1)
    #endif
  }

  @Test func theWireMockWriterNamesAScriptAsSomethingItCannotWrite() throws {
    var bundle = MockBundle()
    bundle.stub(.get("/chat"), with: .webSocket([.send(.string("hi"))]))
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    let error = bundleError { try bundle.write(to: folder, format: .wireMock) }
    #expect(error?.description.contains("WebSocket script") == true)
  }

  @Test func aMockServesAScriptFromABundle() async throws {
    let mock = URLSessionMock(
      bundle: try bundle(#"{"webSocket": {"steps": [{"receive": null}, {"send": "echo"}]}}"#))
    let socket = mock.webSocket(with: URL(string: "wss://x.test/chat")!)
    socket.resume()
    try await socket.send(.string("anything"))
    guard case .string(let text) = try await socket.receive() else {
      Issue.record("expected text")
      return
    }
    #expect(text == "echo")
  }
}
