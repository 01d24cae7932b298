import Foundation
import HTTPSessionMocks
import TestSupport
import Testing

@testable import HTTPSessionServer

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The admin API answers the developer's tools, not web pages: requests addressed to another
/// name (DNS rebinding) and state-changing requests a browser marks as cross-site get `403`,
/// over raw sockets on 127.0.0.1 with the headers a browser would send. One test (and case) at
/// a time: each starts servers, and the browser test two Chromiums.
@Suite(.serialized) struct AdminGuardTests {
  /// A mock that answers `GET /a`, served with the admin API.
  func served() throws -> (URLSessionMock, LoopbackServer) {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("a"))
    return (mock, try mock.startServer(admin: true))
  }

  /// Sends one request with `headers` (each `Name: value`; a `Host` is added unless one is
  /// given) and reads the answer.
  func send(
    _ port: Int, _ method: String, _ path: String, _ headers: [String] = [], body: String = "",
    version: String = "1.1"
  ) throws -> (status: Int, headers: [String: String], body: String) {
    let client = try RawClient(port: port)
    var head = "\(method) \(path) HTTP/\(version)\r\n"
    if !headers.contains(where: { $0.lowercased().hasPrefix("host:") }) {
      head += "Host: 127.0.0.1:\(port)\r\n"
    }
    for header in headers + ["Content-Length: \(body.utf8.count)", "Connection: close"] {
      head += header + "\r\n"
    }
    client.send(head + "\r\n" + body)
    return try #require(client.readResponse())
  }

  static let proxying =
    #"{"request": {"url": "/steal"}, "response": {"proxyBaseUrl": "http://127.0.0.1:1"}}"#

  @Test func aRebindingHostCannotReadTheJournal() throws {
    let (_, server) = try served()
    defer { server.stop() }
    let port = server.port
    let app = try send(port, "GET", "/a", ["Authorization: Bearer secret-token"])
    #expect(app.status == 200)
    for host in ["evil.example:\(port)", "127.0.0.1.evil.example:\(port)", "evil.example"] {
      let read = try send(port, "GET", "/__admin/requests", ["Host: \(host)"])
      #expect(read.status == 403, "\(host): \(read.body)")
      #expect(!read.body.contains("secret-token"))
      #expect(read.body.contains("DNS rebinding"), "\(read.body)")
    }
    // The same request, addressed to the server by one of its own names, reads the journal.
    let own = try send(port, "GET", "/__admin/requests", ["Host: localhost:\(port)"])
    #expect(own.status == 200)
    #expect(own.body.contains("secret-token"))
  }

  @Test func aRequestWithoutAHostIsRefused() throws {
    let (_, server) = try served()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /__admin/requests HTTP/1.0\r\n\r\n")
    let answer = try #require(client.readResponse())
    #expect(answer.status == 403)
    #expect(answer.body.contains("Host"))
  }

  /// The headers a browser sends with a request that a page of another site makes.
  static let crossSite: [[String]] = [
    ["Origin: http://evil.example", "Sec-Fetch-Site: cross-site"],
    ["Origin: http://evil.example"],
    ["Origin: null"],
    ["Origin: http://127.0.0.1:1"],
    ["Origin: https://127.0.0.1"],
    ["Sec-Fetch-Site: cross-site"],
    ["Sec-Fetch-Site: same-site"],
  ]

  @Test(arguments: crossSite)
  func aCrossSiteRequestChangesNothing(_ browser: [String]) throws {
    let (mock, server) = try served()
    defer { server.stop() }
    let port = server.port
    let plain = browser + ["Content-Type: text/plain"]
    let created = try send(port, "POST", "/__admin/mappings", plain, body: Self.proxying)
    #expect(created.status == 403, "\(created.body)")
    #expect(created.body.contains("another site"), "\(created.body)")
    #expect(try send(port, "POST", "/__admin/shutdown", plain).status == 403)
    #expect(try send(port, "POST", "/__admin/reset", plain).status == 403)
    #expect(try send(port, "DELETE", "/__admin/requests", plain).status == 403)
    // Nothing changed: no mapping, the server runs, the journal still holds the refusals.
    let listed = try send(port, "GET", "/__admin/mappings")
    #expect(listed.status == 200)
    #expect(listed.body.contains(#""total": 0"#), "\(listed.body)")
    #expect(try send(port, "GET", "/a").status == 200)
    let refused = mock.exchanges.filter { ($0.response as? HTTPURLResponse)?.statusCode == 403 }
    #expect(refused.count == 4)
  }

  @Test func theDevelopersToolsAndTheServersOwnPagesPass() throws {
    let (_, server) = try served()
    defer { server.stop() }
    let port = server.port
    let passing: [[String]] = [
      [],  // curl, a script, the Python admin client
      ["Host: localhost:\(port)"],
      ["Host: LOCALHOST:\(port)"],
      ["Host: [::1]:\(port)"],
      ["Origin: http://127.0.0.1:\(port)", "Sec-Fetch-Site: same-origin"],
      ["Host: localhost:\(port)", "Origin: http://localhost:\(port)"],
      ["Sec-Fetch-Site: none"],
    ]
    for headers in passing {
      let created = try send(port, "POST", "/__admin/mappings", headers, body: Self.proxying)
      #expect(created.status == 201, "\(headers): \(created.body)")
    }
    // Reads need only the Host: a browser lets no other site read the answer.
    let read = try send(port, "GET", "/__admin/mappings", ["Origin: http://evil.example"])
    #expect(read.status == 200)
    #expect(read.body.contains(#""total": \#(passing.count)"#), "\(read.body)")
  }

  @Test func aRefusalIsRecordedAsTheServersOwnAnswer() throws {
    let (mock, server) = try served()
    defer { server.stop() }
    let refused = try send(
      server.port, "POST", "/__admin/mappings", ["Origin: http://evil.example"],
      body: Self.proxying)
    #expect(refused.status == 403)
    #expect(refused.headers["content-type"] == "application/json")
    let exchange = try #require(mock.exchanges.last)
    #expect(exchange.request.url?.path == "/__admin/mappings")
    #expect((exchange.response as? HTTPURLResponse)?.statusCode == 403)
    #expect(exchange.answeredBy == nil)
    #expect(mock.unmatchedRequests.isEmpty)
  }

  @Test func pathsOutsideTheAdminAPIAnswerAnyHost() throws {
    let (_, server) = try served()
    defer { server.stop() }
    let answer = try send(
      server.port, "GET", "/a",
      ["Host: evil.example:\(server.port)", "Origin: http://evil.example"])
    #expect(answer.status == 200)
    #expect(answer.body == "a")
  }

  /// The names a server on `::1`, or on port 80, answers to, without a socket.
  @Test func theGuardKnowsBracketedAddressesAndTheDefaultPort() throws {
    let v6URL = try #require(URL(string: "http://[::1]:8080/x"))
    let v6 = try #require(AdminGuard(serverURL: v6URL))
    #expect(v6.isOwn(authority: "[::1]:8080"))
    #expect(v6.isOwn(authority: "127.0.0.1:8080"))
    #expect(!v6.isOwn(authority: "::1:8080"))
    #expect(!v6.isOwn(authority: "[::1]"))
    #expect(!v6.isOwn(authority: "[::1]:08080"))
    #expect(v6.isOwn(origin: "http://[::1]:8080"))
    #expect(!v6.isOwn(origin: "https://[::1]:8080"))
    let webURL = try #require(URL(string: "http://localhost:80/x"))
    let web = try #require(AdminGuard(serverURL: webURL))
    #expect(web.isOwn(authority: "localhost"))
    #expect(web.isOwn(authority: "127.0.0.1:80"))
    #expect(web.isOwn(origin: "http://localhost"))
    #expect(!web.isOwn(authority: "localhost:8080"))
  }

  /// A real browser: a page of another origin (a second server) posts a mapping and a shutdown
  /// to the admin API, as a cross-site attack would, and the server's own page posts a mapping;
  /// only the server's own page changes anything.
  @Test(
    .enabled(
      if: installed("chromium") ?? installed("chromium-browser") != nil,
      "chromium is not installed (apt-get install chromium); this check needs a real browser"))
  func inABrowserOnlyTheServersOwnPageChangesIt() async throws {
    let chromium = try #require(installed("chromium") ?? installed("chromium-browser"))
    let folder = try TemporaryFolder("admin-browser")
    let (mock, server) = try served()
    defer { server.stop() }
    let admin = server.baseURL.absoluteString + "/__admin"
    func page(_ name: String, posting target: String, mapping: String, shutdown: Bool) throws {
      let then =
        shutdown
        ? #"fetch("\#(target)/shutdown", {method: "POST", mode: "no-cors"})"# : "null"
      let script = """
        <!doctype html><html><head><link rel="icon" href="data:,"></head><body>
        <p id="out">loading</p><script>
        const body = JSON.stringify({request: {url: "/\(mapping)"}, response: {status: 200}});
        fetch("\(target)/mappings", {method: "POST", mode: "no-cors",
          headers: {"Content-Type": "text/plain"}, body})
          .then(() => \(then))
          .then(() => { document.getElementById("out").textContent = "sent"; },
                e => { document.getElementById("out").textContent = "failed " + e; });
        </script></body></html>
        """
      try Data(script.utf8).write(to: folder.appendingPathComponent(name))
    }
    // The attacker's site posts to the admin API's absolute address.
    try page("evil.html", posting: admin, mapping: "evil", shutdown: true)
    let evilSite = URLSessionMock()
    evilSite.serveDirectory(folder.url)
    let evil = try evilSite.startServer()
    defer { evil.stop() }
    // The server's own page posts to its own admin API, same origin (without the shutdown).
    try page("own.html", posting: "/__admin", mapping: "own", shutdown: false)
    mock.serveDirectory(folder.url)
    func load(_ url: String, _ profile: String) async throws -> String {
      try await run(
        chromium,
        [
          "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--no-first-run", "--user-data-dir=\(folder.appendingPathComponent(profile).path)",
          "--virtual-time-budget=5000", "--dump-dom", url,
        ])
    }
    let attacked = try await load(evil.baseURL.absoluteString + "/evil.html", "profile-evil")
    #expect(attacked.contains(#"<p id="out">sent</p>"#), "\(attacked.prefix(400))")
    // The browser sent both, and the server refused both.
    let refused = mock.exchanges.filter {
      $0.request.url?.path.hasPrefix("/__admin") == true
        && ($0.response as? HTTPURLResponse)?.statusCode == 403
    }
    #expect(refused.count == 2, "\(mock.exchanges.map(\.description))")
    let afterAttack = try await AdminClient(server.baseURL).call("GET", "/__admin/mappings")
    #expect(afterAttack.status == 200)
    #expect(!afterAttack.text.contains("/evil"))
    let own = try await load(server.baseURL.absoluteString + "/own.html", "profile-own")
    #expect(own.contains(#"<p id="out">sent</p>"#), "\(own.prefix(400))")
    let afterOwn = try await AdminClient(server.baseURL).call("GET", "/__admin/mappings")
    #expect(afterOwn.text.contains("/own"), "\(afterOwn.text)")
  }
}
