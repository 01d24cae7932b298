import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

/// A headless Chromium, a real browser, loads a page from the server that opens a `WebSocket`
/// and an `EventSource` to the same server; when both have finished, the page posts what they
/// received to `/report`, and the test waits for that request in the journal.
///
/// The page reports back, rather than the test reading it with `--dump-dom`, because Chromium's
/// virtual-time budget does not wait for a WebSocket: on a loaded machine the page was dumped
/// before the socket's second message arrived.
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
      let finished = 0;
      function show(where, what) {
        received[where].push(what);
        document.getElementById(where).textContent = received[where].join(" ");
      }
      function done() {
        finished += 1;
        if (finished === 2) {
          fetch("/report", {
            method: "POST",
            body: "ws: " + received.ws.join(" ") + " | sse: " + received.sse.join(" "),
          });
        }
      }
      const socket = new WebSocket("ws://" + location.host + "/chat", ["chat"]);
      socket.onopen = () => socket.send("hello from the browser");
      socket.onmessage = (event) => show("ws", event.data);
      socket.onclose = (event) => {
        show("ws", "closed " + event.code + " " + event.reason + " " + socket.protocol);
        done();
      };
      const events = new EventSource("/events");
      events.onmessage = (event) => {
        show("sse", event.data);
        if (event.data === "e2") {
          events.close();
          done();
        }
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
    mock.stub(.post("/report"), with: .status(204))
    let profile = folder.url.appendingPathComponent("profile", isDirectory: true)
    let browser = try ChildProcess(
      URL(fileURLWithPath: chromium),
      [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--user-data-dir=\(profile.path)", server.baseURL.absoluteString + "/",
      ], environment: ProcessInfo.processInfo.environment)
    defer { browser.stop() }
    // The page makes four requests (the page, the socket, the stream, the report) and an
    // EventSource may reconnect, so wait for each next request until the report is among them.
    var report: URLRequest?
    var count = 0
    while report == nil, count < 12 {
      count += 1
      try await mock.waitForRequests(count: count, timeout: .seconds(90))
      report = mock.requests(matching: .post("/report")).first
    }
    let body = try #require(report?.httpBody, "the page posted no report")
    #expect(
      text(body) == "ws: welcome thanks closed 1000 done chat | sse: e1 e2", "\(text(body))")
    let fromClient = mock.webSocketMessages(for: .get("/chat")).filter {
      $0.direction == .fromClient
    }
    #expect(fromClient.map(\.message).count == 1)
    #expect(mock.verify(.get("/events"), called: .atLeast(1)))
  }
}
