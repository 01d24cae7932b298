import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The WebView-style check: a real headless Chromium loads a page from the server, runs its
/// script, which fetches a JSON stub and writes it into the page.
@Suite struct HeadlessBrowserTests {
  @Test(
    .enabled(
      if: installed("chromium") ?? installed("chromium-browser") != nil,
      "chromium is not installed (apt-get install chromium); this check needs a real browser"))
  func aHeadlessBrowserRendersAPageThatFetchesAStub() async throws {
    let chromium = try #require(installed("chromium") ?? installed("chromium-browser"))
    let folder = try TemporaryFolder("browser")
    let site = folder.url
    let page = """
      <!doctype html>
      <html><head><link rel="icon" href="data:,"></head><body>
      <p id="out">loading</p>
      <script>
      fetch("/api/profile").then(r => r.json()).then(p => {
        document.getElementById("out").textContent = "hello " + p.login;
      });
      </script>
      </body></html>
      """
    try Data(page.utf8).write(to: site.appendingPathComponent("index.html"))
    let mock = URLSessionMock()
    mock.serveDirectory(site)
    mock.stub(.get("/api/profile"), with: .json(User(login: "octocat", id: 1)))
    let server = try mock.startServer()
    defer { server.stop() }
    let profile = site.appendingPathComponent("profile", isDirectory: true)
    let dom = try await run(
      chromium,
      [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--user-data-dir=\(profile.path)", "--virtual-time-budget=5000",
        "--dump-dom", server.baseURL.absoluteString + "/",
      ])
    #expect(dom.contains(#"<p id="out">hello octocat</p>"#), "\(dom.prefix(300))")
    #expect(mock.verify(.get("/"), called: .once))
    #expect(mock.verify(.get("/api/profile"), called: .once))
  }
}
