import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct MockBundleTests {
  // MARK: - Entries

  @Test func aBundlesEntriesSayWhatEachStubMatchesAnswersAndWhereItCameFrom() throws {
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: [.status(503), .text("ok")], times: 2)
    bundle.stub(.post("/login"), with: .status(200), whenState: "out", willSetState: "in")
    let written = bundle  // a bundle without the closure, which no file can store
    let reports = reportMessages {
      bundle.stub(.get("/echo")) { request, _ in .data(request.httpBody ?? Data()) }
    }
    #expect(reports.count == 1)
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try written.write(to: folder)
    let read = try MockBundle(contentsOf: folder)

    #expect(bundle.entries.count == 3)
    #expect(bundle.entries[0].matcher == .get("/users/{login}"))
    #expect(bundle.entries[0].responses == [.status(503), .text("ok")])
    #expect(bundle.entries[0].times == 2)
    #expect(bundle.entries[1].whenState == "out")
    #expect(bundle.entries[1].willSetState == "in")
    #expect(bundle.entries[2].hasResponseClosure)
    #expect(!bundle.entries[0].hasResponseClosure)
    #expect(bundle.entries[0].origin.hasPrefix("MockBundle.stub at HTTPSessionMocksTests/"))
    #expect(!bundle.firstMatchWins)

    #expect(read.entries == written.entries)
    #expect(read.entries.map(\.origin) == ["bundle.json entry 1", "bundle.json entry 2"])
  }

  // MARK: - Equality

  @Test func matchersCompareByStructure() {
    #expect(RequestMatcher.get("/users/{login}") == .get("/users/{login}"))
    #expect(RequestMatcher.get("/users/{login}") != .post("/users/{login}"))
    #expect(RequestMatcher.get("/a") != .get("/b"))
    let grouped: RequestMatcher = (.get("/a") && .header("X")) && .query(["q": nil])
    let regrouped: RequestMatcher = .get("/a") && (.header("X") && .query(["q": nil]))
    #expect(grouped == regrouped)
    #expect(RequestMatcher.header("Accept", "a") == .header("accept", "a"))
    #expect(RequestMatcher.header("Accept", "a") != .header("Accept", "b"))
    #expect(RequestMatcher.jsonBody(["a": 1, "b": 2]) == .jsonBody(["b": 2, "a": 1]))
    #expect(RequestMatcher.regex("^x") == .regex("^x"))
    #expect(!RequestMatcher.get("/a") == !.get("/a"))
    let either: RequestMatcher = .get("/a") || .get("/b")
    let swapped: RequestMatcher = .get("/b") || .get("/a")
    #expect(either != swapped)
    #expect(either == (.get("/a") || .get("/b")))
    #expect(RequestMatcher.any == .any)
  }

  @Test func closureMatchersEqualOnlyThemselves() {
    let rule = RequestMatcher("my rule") { _ in true }
    let copy = rule
    #expect(rule == copy)
    #expect(rule != RequestMatcher("my rule") { _ in true })
    #expect((rule && .get("/a")) == (copy && .get("/a")))
  }

  @Test func responsesCompareByWhatTheyAnswer() {
    #expect(StubResponse.json(Account(login: "a", id: 1)) == .json(Account(login: "a", id: 1)))
    #expect(StubResponse.json(Account(login: "a", id: 1)) != .json(Account(login: "b", id: 1)))
    #expect(StubResponse.json(["a": 1, "b": [true]]) == .json(["b": [true], "a": 1]))
    #expect(StubResponse.status(204) == .status(204))
    #expect(StubResponse.status(204) != .status(200))
    #expect(StubResponse.text("x") != .text("x", headers: ["X": "1"]))
    #expect(
      StubResponse.text("x", headers: ["Content-Type": "t"])
        == .data(Data("x".utf8), headers: ["Content-Type": "t"]))
    #expect(StubResponse.error(URLError(.timedOut)) == .error(URLError(.timedOut)))
    #expect(StubResponse.error(URLError(.timedOut)) != .error(URLError(.cancelled)))
    #expect(StubResponse.text("x").delayed(by: .seconds(1)) != .text("x"))
    #expect(
      StubResponse.text("x").dribbled(inChunks: 2, over: .seconds(1))
        == .text("x").dribbled(inChunks: 2, over: .seconds(1)))
    #expect(
      StubResponse.text("x").dribbled(inChunks: 2, over: .seconds(1))
        != .text("x").dribbled(inChunks: 3, over: .seconds(1)))
  }

  @Test func bundlesCompareTheirEntriesInOrder() {
    var a = MockBundle()
    a.stub(.get("/a"), with: .text("a"))
    a.stub(.get("/b"), with: [.status(500), .text("b")], times: 2)
    var b = MockBundle()
    b.stub(.get("/a"), with: .text("a"))
    b.stub(.get("/b"), with: [.status(500), .text("b")], times: 2)
    #expect(a == b)
    #expect(a.count == 2)
    var c = MockBundle()
    c.stub(.get("/b"), with: [.status(500), .text("b")], times: 2)
    c.stub(.get("/a"), with: .text("a"))
    #expect(a != c)
    var d = MockBundle()
    d.stub(.get("/a"), with: .text("a"))
    d.stub(.get("/b"), with: [.status(500), .text("b")], times: 3)
    #expect(a != d)
    var e = MockBundle()
    e.stub(.get("/a"), with: .text("a"), whenState: "s")
    var f = MockBundle()
    f.stub(.get("/a"), with: .text("a"))
    #expect(e != f)
  }

  // MARK: - What cannot be stored

  @Test func closureMatcherIsReportedAtTheStubLineAndWriteNamesIt() throws {
    var bundle = MockBundle()
    let line = #line + 2
    let reports = expectReport(containing: "my own rule", "cannot be stored") {
      bundle.stub(RequestMatcher("my own rule") { _ in true }, with: .status(200))
    }
    #expect(reports.first?.line == line)
    #expect(bundle.count == 1)
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    let error = bundleError { try bundle.write(to: folder.appendingPathComponent("b")) }
    #expect(error?.kind == .unstorable)
    #expect(error?.path == "entries[0].request")
    #expect(error?.description.contains("my own rule") == true)
    #expect(error?.description.contains("MockBundleTests.swift:\(line)") == true)
  }

  @Test func closureResponseAndForeignErrorsAreReportedAndKept() async throws {
    struct Boom: Error {}
    var bundle = MockBundle()
    expectReport(containing: "closure") {
      bundle.stub(.get("/echo/{word}")) { _, parameters in .text(parameters["word"] ?? "") }
    }
    expectReport(containing: "Boom", "not a URLError") {
      bundle.stub(.get("/boom"), with: .error(Boom()))
    }
    expectReport(containing: "as is") {
      bundle.stub(.get("/raw"), with: StubResponse(data: nil, response: nil, error: nil))
    }
    #expect(bundle.count == 3)
    #expect(throws: MockBundleError.self) { try bundle.encodedJSON() }
    // Still usable in this process.
    let mock = URLSessionMock(bundle: bundle)
    #expect(route(mock, "GET", "https://x.test/echo/hi").text == "hi")
    #expect(route(mock, "GET", "https://x.test/raw").status == 200)
  }

  @Test func aMissingFixtureIsReportedWhereItIsUsedAndWhenWritten() throws {
    var bundle = MockBundle()
    let reports = capturedReports {
      bundle.stub(.get("/f"), with: .file("Fixtures/missing.json", in: .module))
    }
    #expect(reports.isEmpty)
    let error = bundleError { _ = try bundle.encodedJSON() }
    #expect(error?.kind == .unstorable)
    #expect(error?.description.contains("Fixtures/missing.json") == true)
  }

  // MARK: - Mocks taking bundles

  @Test func loadAddsStubsAndNewestWins() {
    var bundle = MockBundle()
    bundle.stub(.get("/a"), with: .text("bundle a"))
    bundle.stub(.get("/b"), with: .text("bundle b"))
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("code a"))
    let stubs = mock.load(bundle)
    #expect(stubs.count == 2)
    #expect(route(mock, "GET", "https://x.test/a").text == "bundle a")
    mock.stub(.get("/b"), with: .text("code b"))
    #expect(route(mock, "GET", "https://x.test/b").text == "code b")
    #expect(stubs[0].callCount == 1)
    #expect(stubs[1].callCount == 0)
  }

  @Test func laterEntriesWinWithinABundle() {
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .text("any user"))
    bundle.stub(.get("/users/octocat"), with: .text("octocat"))
    let mock = URLSessionMock(bundle: bundle)
    #expect(route(mock, "GET", "https://x.test/users/octocat").text == "octocat")
    #expect(route(mock, "GET", "https://x.test/users/ada").text == "any user")
  }

  @Test func timesAndScenarioStatesCarryOver() {
    var bundle = MockBundle()
    bundle.stub(.get("/me"), with: .status(401), whenState: "started")
    bundle.stub(.post("/login"), with: .status(200), times: 1, willSetState: "logged in")
    bundle.stub(.get("/me"), with: .text("me"), whenState: "logged in")
    let mock = URLSessionMock(bundle: bundle)
    #expect(route(mock, "GET", "https://x.test/me").status == 401)
    #expect(route(mock, "POST", "https://x.test/login").status == 200)
    #expect(mock.scenarioState == "logged in")
    #expect(route(mock, "GET", "https://x.test/me").text == "me")
    expectReport(containing: ".times(1)") {
      #expect(route(mock, "POST", "https://x.test/login").urlErrorCode == .resourceUnavailable)
    }
  }

  @Test func useReplacesEarlierUseAndKeepsCodeAndLoad() {
    var first = MockBundle()
    first.stub(.get("/profile"), with: .status(401))
    first.stub(.get("/only-first"), with: .status(200))
    var second = MockBundle()
    second.stub(.get("/profile"), with: .status(200))
    var loaded = MockBundle()
    loaded.stub(.get("/loaded"), with: .text("loaded"))
    let mock = URLSessionMock()
    mock.stub(.get("/health"), with: .text("up"))
    mock.load(loaded)
    mock.use(first)
    #expect(route(mock, "GET", "https://x.test/profile").status == 401)
    mock.use(second)
    #expect(route(mock, "GET", "https://x.test/profile").status == 200)
    expectReport(containing: "/only-first") {
      #expect(route(mock, "GET", "https://x.test/only-first").urlErrorCode == .resourceUnavailable)
    }
    mock.use(nil)
    expectReport(containing: "/profile") {
      #expect(route(mock, "GET", "https://x.test/profile").urlErrorCode == .resourceUnavailable)
    }
    #expect(route(mock, "GET", "https://x.test/health").text == "up")
    #expect(route(mock, "GET", "https://x.test/loaded").text == "loaded")
  }

  @Test func nearMissReportPointsAtTheLoadLineAndNamesTheEntry() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try writeFile(
      """
      [ { "request": { "url": "://a.test/x" }, "response": { "code": 200 } },
        { "request": { "url": "://a.test/y" }, "response": { "code": 200 } },
        { "request": { "url": "://httpbin.org/ip" }, "response": { "code": 200 } } ]
      """, "bundle.json", in: folder)
    let bundle = try MockBundle(contentsOf: folder)
    let mock = URLSessionMock()
    let line = #line + 1
    mock.load(bundle)
    let reports = expectReport(containing: "bundle.json entry 3 (GET ://httpbin.org/ip)") {
      route(mock, "GET", "https://httpbin.org/ipx")
    }
    #expect(reports.first?.message.contains("MockBundleTests.swift:\(line)") == true)
  }

  @Test func aMalformedPatternIsReportedAtTheLoadLineNamingTheEntry() throws {
    var bundle = MockBundle()
    expectReport(containing: "malformed") {
      // Reported here too: the mock would never match it.
      let mock = URLSessionMock()
      mock.stub(.get("/users/{login"), with: .status(200))
    }
    bundle.stub(.get("/users/{login"), with: .status(200))
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try bundle.write(to: folder)
    let reloaded = try MockBundle(contentsOf: folder)
    #expect(reloaded == bundle)
    let mock = URLSessionMock()
    let line = #line + 2
    let reports = expectReport(containing: "bundle.json entry 1", "can never match") {
      mock.load(reloaded)
    }
    #expect(reports.first?.line == line)
  }

  @Test func aPathThatDoesNotExistIsUnreadable() {
    let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
      "no-such-bundle-\(UUID().uuidString)")
    let error = bundleError { _ = try MockBundle(contentsOf: missing) }
    #expect(error?.kind == .unreadable)
    #expect(error?.description == "\(missing.path): no such file or folder")
  }

  @Test func initWithBundleUsesTheClock() async throws {
    var bundle = MockBundle()
    bundle.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(3)))
    let clock = VirtualClock()
    let mock = URLSessionMock(bundle: bundle, clock: clock)
    let box = Shared(RoutedAnswer())
    mock.dataTask(
      with: routingRequest("GET", "https://x.test/slow"), completionHandler: box.handler
    )
    .resume()
    #expect(!box.current.delivered)
    await clock.advance(by: .seconds(3))
    #expect(box.current.text == "late")
  }
}
