import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

/// A headless Chromium, a real browser, loads a page from the server that opens a `WebSocket`
/// and an `EventSource` to the same server and writes what they receive into the page; the
/// test reads the page back with `--dump-dom`.
@Suite struct BrowserWebSocketTests {
  static let browser =
    installed("chromium-headless-shell") ?? installed("chromium") ?? installed("chromium-browser")

  @Test(
    .enabled(
      if: browser != nil,
      "no headless Chromium (apt-get install chromium-headless-shell); this check needs one"))
  func aPageOpensAWebSocketAndAnEventSourceToTheServer() async throws {
    let chromium = try #require(Self.browser)
    let folder = try TemporaryFolder("browser-websocket")
    let site = folder.url.appendingPathComponent("site", isDirectory: true)
    try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
    let page = """
      <!doctype html>
      <html><head><link rel="icon" href="data:,"></head><body>
      <p id="ws">connecting</p>
      <p id="sse">connecting</p>
      <script>
      const received = { ws: [], sse: [] };
      function show(where, what) {
        received[where].push(what);
        document.getElementById(where).textContent = received[where].join(" ");
      }
      const socket = new WebSocket("ws://" + location.host + "/chat", ["chat"]);
      socket.onopen = () => socket.send("hello from the browser");
      socket.onmessage = (event) => show("ws", event.data);
      socket.onclose = (event) => show("ws", "closed " + event.code + " " + event.reason +
        " " + socket.protocol);
      const events = new EventSource("/events");
      events.onmessage = (event) => {
        show("sse", event.data);
        if (event.data === "e2") events.close();
      };
      </script>
      </body></html>
      """
    try Data(page.utf8).write(to: site.appendingPathComponent("index.html"))
    let mock = URLSessionMock()
    mock.serveDirectory(site)
    mock.stub(
      .get("/chat"),
      with: .webSocket(
        subprotocol: "chat",
        [
          .send(.string("welcome")), .receive(.string("hello from the browser")),
          .send(.string("thanks")), .close(.normalClosure, reason: "done"),
        ]))
    mock.stub(
      .get("/events"),
      with: .events([ServerSentEvent(data: "e1"), ServerSentEvent(data: "e2")], every: .zero))
    let server = try mock.startServer()
    defer { server.stop() }
    let profile = folder.url.appendingPathComponent("profile", isDirectory: true)
    let dom = try await run(
      chromium,
      [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--user-data-dir=\(profile.path)", "--virtual-time-budget=5000",
        "--dump-dom", server.baseURL.absoluteString + "/",
      ])
    #expect(dom.contains(#"<p id="ws">welcome thanks closed 1000 done chat</p>"#), "\(dom)")
    #expect(dom.contains(#"<p id="sse">e1 e2</p>"#), "\(dom)")
    let fromClient = mock.webSocketMessages(for: .get("/chat")).filter {
      $0.direction == .fromClient
    }
    #expect(fromClient.map(\.message).count == 1)
    #expect(mock.verify(.get("/events"), called: .atLeast(1)))
  }
}
