import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One folder of WireMock mappings covering every field this package reads, served by the real
/// WireMock 2.35.1 and by this package (injected, and over its loopback server), the same
/// requests sent to each in the same order, the answers compared: status, the headers the
/// mappings set, bodies, faults.
@Suite(
  .enabled(if: RealWireMock.isAvailable, "\(RealWireMock.unavailableReason ?? "")"),
  .timeLimit(.minutes(3)))
struct WireMockSideBySideTests {
  /// The mappings, by file name (some in a subfolder, as WireMock reads `mappings/` recursively).
  static let mappings: [String: String] = [
    "01-exact.json":
      #"{"request": {"method": "GET", "url": "/users/octocat?tab=repos"}, "response": {"status": 200, "jsonBody": {"login": "octocat", "id": 1}, "headers": {"Content-Type": "application/json", "X-Kind": "exact"}}}"#,
    "02-path.json":
      #"{"request": {"method": "GET", "urlPath": "/items"}, "response": {"status": 204, "headers": {"X-Kind": "path"}}}"#,
    "03-path-pattern.json":
      #"{"request": {"method": "GET", "urlPathPattern": "/orders/[0-9]+"}, "response": {"status": 200, "bodyFileName": "orders/order.json", "headers": {"X-Kind": "order"}}}"#,
    "04-url-pattern.json":
      #"{"request": {"urlPattern": "/search\\?q=[a-z]+"}, "response": {"status": 200, "body": "search", "headers": {"X-Kind": "url-pattern"}}}"#,
    "05-any-method.json":
      #"{"request": {"urlPath": "/any"}, "response": {"status": 200, "body": "any"}}"#,
    "06-delete.json":
      #"{"request": {"method": "DELETE", "urlPath": "/any"}, "response": {"status": 202, "body": "deleted"}}"#,
    "07-query.json":
      #"{"request": {"method": "GET", "urlPath": "/q", "queryParameters": {"a": {"equalTo": "1"}, "b": {"matches": "[0-9]+"}, "gone": {"absent": true}}}, "response": {"status": 200, "body": "q"}}"#,
    "08-query-contains.json":
      #"{"request": {"urlPath": "/q2", "queryParameters": {"term": {"contains": "swift"}, "page": {"doesNotMatch": "0"}}}, "response": {"status": 200, "body": "q2"}}"#,
    "09-header-contains.json":
      #"{"request": {"urlPath": "/h", "headers": {"Accept": {"contains": "json"}}}, "response": {"status": 200, "body": "json please"}}"#,
    "10-header-ci.json":
      #"{"request": {"urlPath": "/hci", "headers": {"X-Token": {"equalTo": "AbC", "caseInsensitive": true}}}, "response": {"status": 200, "body": "ci"}}"#,
    "11-header-absent.json":
      #"{"request": {"urlPath": "/habsent", "headers": {"X-Debug": {"absent": true}}}, "response": {"status": 200, "body": "no debug"}}"#,
    "12-header-and.json":
      #"{"request": {"urlPath": "/hand", "headers": {"X-Pair": {"and": [{"contains": "a"}, {"contains": "b"}]}}}, "response": {"status": 200, "body": "and"}}"#,
    "13-header-or.json":
      #"{"request": {"urlPath": "/hor", "headers": {"X-One": {"or": [{"equalTo": "x"}, {"equalTo": "y"}]}}}, "response": {"status": 200, "body": "or"}}"#,
    "14-cookie.json":
      #"{"request": {"urlPath": "/cookie", "cookies": {"session": {"equalTo": "s1"}}}, "response": {"status": 200, "body": "cookie"}}"#,
    "15-basic.json":
      #"{"request": {"urlPath": "/basic", "basicAuthCredentials": {"username": "u", "password": "p"}}, "response": {"status": 200, "body": "basic"}}"#,
    "16-body-equal.json":
      #"{"request": {"method": "POST", "urlPath": "/b/equal", "bodyPatterns": [{"equalTo": "exact body"}]}, "response": {"status": 201, "body": "equal"}}"#,
    "17-body-contains.json":
      #"{"request": {"method": "POST", "urlPath": "/b/contains", "bodyPatterns": [{"contains": "needle"}]}, "response": {"status": 201, "body": "contains"}}"#,
    "18-body-matches.json":
      #"{"request": {"method": "POST", "urlPath": "/b/matches", "bodyPatterns": [{"matches": "id=[0-9]+"}]}, "response": {"status": 201, "body": "matches"}}"#,
    "19-json.json":
      #"{"request": {"method": "POST", "urlPath": "/b/json", "bodyPatterns": [{"equalToJson": {"item": "widget", "n": 1}}]}, "response": {"status": 201, "body": "json"}}"#,
    "20-json-extra.json":
      #"{"request": {"method": "POST", "urlPath": "/b/json-extra", "bodyPatterns": [{"equalToJson": {"a": [1, 2]}, "ignoreExtraElements": true}]}, "response": {"status": 201, "body": "extra"}}"#,
    "21-json-order.json":
      #"{"request": {"method": "POST", "urlPath": "/b/json-order", "bodyPatterns": [{"equalToJson": "{\"a\": [1, 2]}", "ignoreArrayOrder": true}]}, "response": {"status": 201, "body": "order"}}"#,
    "22-json-placeholders.json":
      #"{"request": {"method": "POST", "urlPath": "/b/json-any", "bodyPatterns": [{"equalToJson": {"id": "${json-unit.any-number}", "name": "${json-unit.any-string}", "code": "${json-unit.regex}[A-Z]{2}", "extra": "${json-unit.ignore}"}}]}, "response": {"status": 201, "body": "placeholders"}}"#,
    "23-jsonpath-filter.json":
      #"{"request": {"method": "POST", "urlPath": "/b/jp", "bodyPatterns": [{"matchesJsonPath": "$.items[?(@.sku == 'A1')]"}, {"matchesJsonPath": {"expression": "$.total", "equalTo": "12"}}]}, "response": {"status": 200, "body": "paid"}}"#,
    "24-jsonpath-any.json":
      #"{"request": {"method": "POST", "urlPath": "/b/jp-any", "bodyPatterns": [{"matchesJsonPath": {"expression": "$.tags[*]", "matches": "urgent|now"}}]}, "response": {"status": 200, "body": "tagged"}}"#,
    "25-priority-general.json":
      #"{"priority": 5, "request": {"method": "GET", "urlPathPattern": "/p/.*"}, "response": {"status": 200, "body": "general"}}"#,
    "26-priority-specific.json":
      #"{"priority": 1, "request": {"method": "GET", "urlPath": "/p/special"}, "response": {"status": 200, "body": "specific"}}"#,
    "27-priority-low.json":
      #"{"priority": 9, "request": {"method": "GET", "urlPath": "/p/special"}, "response": {"status": 200, "body": "never"}}"#,
    "scenarios/28-cart-empty.json":
      #"{"scenarioName": "cart", "requiredScenarioState": "Started", "request": {"method": "GET", "urlPath": "/cart"}, "response": {"status": 200, "body": "empty"}}"#,
    "scenarios/29-cart-add.json":
      #"{"scenarioName": "cart", "requiredScenarioState": "Started", "newScenarioState": "full", "request": {"method": "POST", "urlPath": "/cart"}, "response": {"status": 201}}"#,
    "scenarios/30-cart-full.json":
      #"{"scenarioName": "cart", "requiredScenarioState": "full", "request": {"method": "GET", "urlPath": "/cart"}, "response": {"status": 200, "body": "1 item"}}"#,
    "scenarios/31-login.json":
      #"{"scenarioName": "login", "requiredScenarioState": "Started", "request": {"method": "GET", "urlPath": "/me"}, "response": {"status": 401, "body": "who?"}}"#,
    "32-headers.json":
      #"{"id": "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7", "name": "cookies", "metadata": {"team": "ios"}, "request": {"method": "POST", "urlPath": "/login"}, "response": {"status": 200, "statusMessage": "Fine", "headers": {"Set-Cookie": ["a=1", "b=2"], "Location": "/home"}}}"#,
    "33-base64.json":
      #"{"request": {"method": "GET", "urlPath": "/bytes"}, "response": {"status": 200, "base64Body": "AAECAw=="}}"#,
    "34-delay.json":
      #"{"request": {"method": "GET", "urlPath": "/slow"}, "response": {"status": 200, "body": "slow", "fixedDelayMilliseconds": 5}}"#,
    "35-dribble.json":
      #"{"request": {"method": "GET", "urlPath": "/dribble"}, "response": {"status": 200, "body": "dribbled body", "chunkedDribbleDelay": {"numberOfChunks": 3, "totalDuration": 6}}}"#,
    "36-uniform.json":
      #"{"request": {"method": "GET", "urlPath": "/uniform"}, "response": {"status": 200, "body": "uniform", "delayDistribution": {"type": "uniform", "lower": 1, "upper": 5}}}"#,
    "37-reset.json":
      #"{"request": {"method": "GET", "urlPath": "/fault/reset"}, "response": {"fault": "CONNECTION_RESET_BY_PEER"}}"#,
    "38-empty.json":
      #"{"request": {"method": "GET", "urlPath": "/fault/empty"}, "response": {"fault": "EMPTY_RESPONSE"}}"#,
    "39-chunk.json":
      #"{"request": {"method": "GET", "urlPath": "/fault/chunk"}, "response": {"fault": "MALFORMED_RESPONSE_CHUNK"}}"#,
    "40-random.json":
      #"{"request": {"method": "GET", "urlPath": "/fault/random"}, "response": {"fault": "RANDOM_DATA_THEN_CLOSE"}}"#,
    "41-status-message.json":
      #"{"request": {"method": "GET", "urlPath": "/status-message"}, "response": {"status": 503, "statusMessage": "Down for maintenance", "body": "later"}}"#,
  ]

  static let files = [
    "orders/order.json": #"{"id":7,"items":[]}"#, "notes.txt": "plain notes",
    "static/index.html": "<p>index</p>", "static/data.csv": "a,b\n1,2\n",
    "static/app.js": "run()", "static/config.yaml": "a: 1",
  ]

  /// One request of the run.
  struct Probe: CustomStringConvertible {
    var method = "GET"
    var path: String
    var headers: [String: String] = [:]
    var body: String?

    var description: String { "\(method) \(path) \(headers) \(body ?? "")" }
  }

  /// The requests, in order (scenarios make the order count): each field matching and missing.
  static var probes: [Probe] {
    var probes: [Probe] = []
    func add(
      _ method: String = "GET", _ path: String, _ headers: [String: String] = [:],
      _ body: String? = nil
    ) {
      probes.append(Probe(method: method, path: path, headers: headers, body: body))
    }
    add("GET", "/users/octocat?tab=repos")
    add("GET", "/status-message")
    add("GET", "/users/octocat?tab=repos&x=1")
    add("GET", "/users/octocat")
    add("GET", "/users/octocat?tab=stars")
    add("POST", "/users/octocat?tab=repos")
    add("HEAD", "/items")
    for path in ["/items", "/items?any=thing", "/items/", "/Items", "/items/1"] { add("GET", path) }
    // Not /orders or /orders/: WireMock serves __files/orders as a folder there (a 403), which
    // this package does not do.
    for path in ["/orders/7", "/orders/123", "/orders/x", "/orders/7/lines", "/orders/7/"] {
      add("GET", path)
    }
    for path in ["/search?q=swift", "/search?q=Swift", "/search", "/search?q=swift&p=1"] {
      add("GET", path)
    }
    for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] { add(method, "/any") }
    // The files of __files/ at their own paths, to a GET that no mapping matches.
    for path in [
      "/orders/order.json", "/orders/order.json?x=1", "/notes.txt", "/static", "/static/",
      "/static/index.html", "/static/data.csv", "/static/app.js", "/static/config.yaml",
      "/static/missing.txt", "/notes.txt/",
    ] { add("GET", path) }
    add("HEAD", "/notes.txt")
    add("POST", "/notes.txt")
    for path in [
      "/q?a=1&b=2", "/q?b=22&a=1", "/q?a=2&b=2", "/q?a=1", "/q?a=1&b=x", "/q?a=1&b=2&gone=1",
      "/q?A=1&b=2", "/q?a=2&a=1&b=3",
    ] { add("GET", path) }
    for path in [
      "/q2?term=swiftui&page=1", "/q2?term=kotlin&page=1", "/q2?term=swift&page=0",
      "/q2?term=swift",
    ] {
      add("GET", path)
    }
    add("GET", "/h", ["Accept": "application/json"])
    add("GET", "/h", ["Accept": "text/html"])
    add("GET", "/h")
    add("GET", "/hci", ["X-Token": "abc"])
    add("GET", "/hci", ["x-token": "ABC"])
    add("GET", "/hci", ["X-Token": "abd"])
    add("GET", "/habsent")
    add("GET", "/habsent", ["X-Debug": "1"])
    add("GET", "/hand", ["X-Pair": "ab"])
    add("GET", "/hand", ["X-Pair": "a"])
    add("GET", "/hor", ["X-One": "y"])
    add("GET", "/hor", ["X-One": "z"])
    add("GET", "/cookie", ["Cookie": "a=2; session=s1"])
    add("GET", "/cookie", ["Cookie": "session=s2"])
    add("GET", "/cookie")
    add("GET", "/basic", ["Authorization": "Basic dTpw"])
    add("GET", "/basic", ["Authorization": "Basic dTpx"])
    add("GET", "/basic")
    add("POST", "/b/equal", [:], "exact body")
    add("POST", "/b/equal", [:], "exact body!")
    add("POST", "/b/contains", [:], "hay needle hay")
    add("POST", "/b/contains", [:], "hay hay")
    add("POST", "/b/matches", [:], "id=42")
    add("POST", "/b/matches", [:], "xid=42")
    add("POST", "/b/json", [:], #"{"n": 1.0, "item": "widget"}"#)
    add("POST", "/b/json", [:], #"{"n": 1, "item": "widget", "more": true}"#)
    add("POST", "/b/json", [:], "not json")
    add("POST", "/b/json-extra", [:], #"{"a": [1, 2, 3], "b": 0}"#)
    add("POST", "/b/json-extra", [:], #"{"a": [2, 1]}"#)
    add("POST", "/b/json-order", [:], #"{"a": [2, 1]}"#)
    add("POST", "/b/json-order", [:], #"{"a": [2, 1, 3]}"#)
    add("POST", "/b/json-any", [:], #"{"id": 3, "name": "x", "code": "AB", "extra": [1]}"#)
    add("POST", "/b/json-any", [:], #"{"id": "3", "name": "x", "code": "AB", "extra": 1}"#)
    add("POST", "/b/json-any", [:], #"{"id": 3, "name": "x", "code": "ab", "extra": 1}"#)
    add("POST", "/b/json-any", [:], #"{"id": 3, "name": "x", "code": "AB"}"#)
    add("POST", "/b/jp", [:], #"{"total": 12, "items": [{"sku": "B2"}, {"sku": "A1"}]}"#)
    add("POST", "/b/jp", [:], #"{"total": 12, "items": [{"sku": "B2"}]}"#)
    add("POST", "/b/jp", [:], #"{"total": 13, "items": [{"sku": "A1"}]}"#)
    add("POST", "/b/jp", [:], #"{"total": "12", "items": [{"sku": "A1"}]}"#)
    add("POST", "/b/jp-any", [:], #"{"tags": ["later", "urgent"]}"#)
    add("POST", "/b/jp-any", [:], #"{"tags": ["later"]}"#)
    add("POST", "/b/jp-any", [:], #"{"tags": []}"#)
    for path in ["/p/special", "/p/other", "/p/", "/p"] { add("GET", path) }
    add("GET", "/cart")
    add("GET", "/me")
    add("POST", "/cart")
    add("GET", "/cart")
    add("GET", "/cart")
    add("POST", "/cart")
    add("GET", "/me")
    add("POST", "/login")
    add("GET", "/login")
    add("GET", "/bytes")
    add("GET", "/slow")
    add("GET", "/dribble")
    add("GET", "/uniform")
    for fault in ["reset", "empty", "chunk", "random"] { add("GET", "/fault/" + fault) }
    for path in ["/nothing", "/users", "/b/json", "/fault", "/q2"] { add("GET", path) }
    return probes
  }

  /// What a client saw.
  struct Outcome: Equatable, CustomStringConvertible {
    var status: Int?
    var headers: [String: String] = [:]
    var body = Data()
    var error: URLError.Code?

    var description: String {
      if let error { return "error \(error.rawValue)" }
      return
        "\(status ?? 0) \(headers.sorted { $0.key < $1.key }) \(String(decoding: body, as: UTF8.self))"
    }
  }

  /// The headers the mappings set, which both sides must agree on.
  static let comparedHeaders = ["Content-Type", "X-Kind", "Location", "Set-Cookie"]

  static func outcome(_ session: any HTTPSession, base: URL, _ probe: Probe) async -> Outcome {
    guard let url = URL(string: base.absoluteString + probe.path) else { return Outcome() }
    var request = URLRequest(url: url)
    request.httpMethod = probe.method
    request.timeoutInterval = 10
    for (name, value) in probe.headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = probe.body.map { Data($0.utf8) }
    do {
      let (data, response) = try await session.data(for: request)
      guard let http = response as? HTTPURLResponse else { return Outcome() }
      var outcome = Outcome(status: http.statusCode)
      // An unmatched request's 404 carries each side's own report.
      guard http.statusCode != 404 else { return outcome }
      for name in comparedHeaders {
        if let value = http.value(forHTTPHeaderField: name) { outcome.headers[name] = value }
      }
      outcome.body = data
      return outcome
    } catch {
      return Outcome(error: (error as? URLError)?.code ?? .unknown)
    }
  }

  @Test func theRealWireMockAndThisPackageAnswerAlike() async throws {
    let folder = try TemporaryFolder("wiremock-side-by-side")
    for (name, text) in Self.mappings {
      let url = folder.url.appendingPathComponent("mappings/" + name)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    for (name, text) in Self.files {
      let url = folder.url.appendingPathComponent("__files/" + name)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    let probes = Self.probes
    #expect(Self.mappings.count >= 30)
    #expect(probes.count >= 100)

    let bundle = try MockBundle(contentsOf: folder.url)
    #expect(bundle.count == Self.mappings.count)
    func makeMock() -> URLSessionMock {
      let mock = URLSessionMock(bundle: bundle, clock: ContinuousClock())
      mock.serveWireMockFiles(of: folder.url)
      mock.unmatchedRequestPolicy = .respond(with: .status(404))
      return mock
    }
    let injected = makeMock()
    let served = makeMock()
    let server = try served.startServer()
    defer { server.stop() }
    let wireMock = try await RealWireMock.start(rootDirectory: folder.url)
    defer { wireMock.stop() }
    let live = URLSession(configuration: .ephemeral)
    defer { live.finishTasksAndInvalidate() }
    let serverBase = URL(string: "http://127.0.0.1:\(server.port)")!

    var compared = 0
    for probe in probes {
      let real = await Self.outcome(live, base: wireMock.baseURL, probe)
      let overLoopback = await Self.outcome(live, base: serverBase, probe)
      var throughInjection = await Self.outcome(
        injected, base: URL(string: "http://127.0.0.1")!, probe)
      #expect(overLoopback == real, "\(probe): loopback \(overLoopback), WireMock \(real)")
      if probe.path.hasPrefix("/fault/") {
        // The injected door gives each fault's documented URLError; the wire's is the client's.
        let fault = StubResponse.Fault.allCases.first {
          $0.rawValue.lowercased().contains(probe.path.dropFirst("/fault/".count))
        }
        #expect(throughInjection.error == fault?.error.code, "\(probe)")
        throughInjection = real
      }
      #expect(throughInjection == real, "\(probe): injected \(throughInjection), WireMock \(real)")
      compared += 1
    }
    #expect(compared == probes.count)
    // A reason phrase reaches no URLSession: compare the status lines on the wire.
    func statusLine(_ port: Int) throws -> Substring? {
      try rawExchange(
        port: port, "GET /status-message HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
      ).split(separator: "\r\n").first
    }
    let realLine = try statusLine(try #require(wireMock.baseURL.port))
    #expect(realLine == "HTTP/1.1 503 Down for maintenance")
    #expect(try statusLine(server.port) == realLine)
    #expect(injected.scenarioState(of: "cart") == "full")
    #expect(injected.scenarioState(of: "login") == "Started")
  }
}
