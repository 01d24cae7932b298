import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What happens to a request no stub matches, and the near-miss report that explains it.
@Suite struct NearMissTests {
  /// The report a fresh mock with `stubs` gives for `request`, and what the code received.
  private func unmatchedReport(
    stubs: (URLSessionMock) -> Void, for request: URLRequest
  ) -> (report: String, answer: RoutedAnswer) {
    let mock = URLSessionMock()
    stubs(mock)
    var answer = RoutedAnswer()
    let reports = reportMessages { answer = route(mock, request) }
    #expect(reports.count == 1)
    return (reports.first ?? "", answer)
  }

  // MARK: - The default policy

  @Test func unmatchedRequestGetsATransportErrorNeverASuccess() {
    let (_, answer) = unmatchedReport(
      stubs: { $0.stub(.get("/a"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/b"))
    #expect(answer.delivered)
    #expect(answer.urlErrorCode == .resourceUnavailable)
    #expect(answer.response == nil)
    #expect(answer.data == nil)
    let failingURL = (answer.error as? URLError)?.failingURL
    #expect(failingURL?.absoluteString == "https://e.com/b")
  }

  @Test func unmatchedRequestErrorPrintsWhatHappened() throws {
    let (_, answer) = unmatchedReport(
      stubs: { $0.stub(.get("/a"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/b"))
    let error = try #require(answer.error)
    // What Swift Testing's "Caught error: ..." and string interpolation show, on Linux too.
    #expect(
      String(describing: error).contains(#""URLSessionMock: no stub matches GET https://e.com/b""#))
    #expect(!String(describing: error).contains("(null)"))
    #expect(error.localizedDescription == "URLSessionMock: no stub matches GET https://e.com/b")
  }

  @Test func unmatchedRequestFailsAtTheLineThatCreatedTheMock() {
    let line = #line + 1
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .status(200))
    expectReport {
      route(mock, "GET", "https://e.com/b")
    } matching: { report in
      report.line == line
        && report.fileID == "HTTPSessionMocksTests/NearMissTests.swift"
    }
  }

  @Test func reportNamesTheRequestWithItsHeadersAndBody() {
    let (report, _) = unmatchedReport(
      stubs: { $0.stub(.get("/users/octocat"), with: .status(200)) },
      for: routingRequest(
        "POST", "https://api.example.com/users/octocat?x=1",
        headers: ["Accept": "text/plain"], body: Data(#"{"a":1}"#.utf8)))
    #expect(report.hasPrefix("No stub matches POST https://api.example.com/users/octocat?x=1\n"))
    #expect(report.contains("headers: Accept: text/plain"))
    #expect(report.contains(#"body: {"a":1}"#))
    #expect(report.contains("The code under test received URLError(.resourceUnavailable)."))
  }

  @Test func reportSaysWhichMethodWasExpected() {
    let (report, _) = unmatchedReport(
      stubs: { $0.stub(.get("/users/octocat"), with: .status(200)) },
      for: routingRequest("POST", "https://e.com/users/octocat"))
    #expect(report.contains("Closest stubs:\n  1. GET /users/octocat (registered at "))
    #expect(report.contains("       - method: expected GET, got POST\n"))
  }

  @Test func reportPointsOutATrailingSlash() {
    let (report, _) = unmatchedReport(
      stubs: { $0.stub(.get("/users/octocat"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/users/octocat/"))
    #expect(
      report.contains("- path: expected /users/octocat, got /users/octocat/ (trailing slash)"))

    let (reverse, _) = unmatchedReport(
      stubs: { $0.stub(.get("/users/{login}/"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/users/octocat"))
    #expect(
      reverse.contains("- path: expected /users/{login}/, got /users/octocat (trailing slash)"))
  }

  @Test func anEncodedSlashIsShownAsSentInReports() {
    let mock = URLSessionMock()
    mock.stub(.get("/a/b"), with: .status(200))
    expectReport {
      _ = route(mock, "GET", "https://e.com/a%2Fb")
    } matching: { report in
      report.message.contains("got /a%2Fb")
    }
  }

  @Test func reportShowsJSONBodiesAsJSONAndOtherTextAsAStringLiteral() {
    func body(_ text: String) -> String {
      let (report, _) = unmatchedReport(
        stubs: { $0.stub(.get("/a"), with: .status(200)) },
        for: routingRequest("POST", "https://e.com/b", body: Data(text.utf8)))
      let line = report.split(separator: "\n").first { $0.contains("body: ") }
      return line.map { String($0.trimmingPrefix(while: { $0 == " " })) } ?? "(no body line)"
    }
    #expect(body(#"{"title":"Buy milk"}"#) == #"body: {"title":"Buy milk"}"#)
    #expect(body("[\n  1,\n  2\n]") == "body: [ 1, 2 ]")
    #expect(body("{\n\t\"done\": true\n}") == #"body: { "done": true }"#)
    #expect(body(#"say "hi" \ bye"#) == #"body: "say \"hi\" \\ bye""#)
    #expect(body("line 1\nline 2") == #"body: "line 1\nline 2""#)
    #expect(body(#"{"not": json"#) == #"body: "{\"not\": json""#)
    let long = "[" + Array(repeating: #""item""#, count: 40).joined(separator: ",") + "]"
    #expect(body(long) == "body: " + long.prefix(120) + "… (\(long.utf8.count) bytes)")
  }

  @Test func reportNamesAMissingQueryItem() {
    let (report, _) = unmatchedReport(
      stubs: { $0.stub(.get("/repos?page"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/repos?per_page=10"))
    #expect(report.contains("- query: missing page\n"))

    let (valued, _) = unmatchedReport(
      stubs: { $0.stub(.get("/repos?page=2"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/repos?page=3"))
    #expect(valued.contains("- query page: expected page=2, got page=3"))
  }

  @Test func reportNamesAMissingOrDifferentHeader() {
    let (missing, _) = unmatchedReport(
      stubs: { $0.stub(.get("/me").header("Authorization"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/me"))
    #expect(missing.contains("- header Authorization: missing\n"))

    let (different, _) = unmatchedReport(
      stubs: { $0.stub(.get("/me").header("Accept", "text/plain"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/me", headers: ["Accept": "text/html"]))
    #expect(different.contains(#"- header Accept: expected "text/plain", got "text/html""#))
  }

  @Test func reportNamesAHostSchemeOrPortMismatch() {
    let (host, _) = unmatchedReport(
      stubs: { $0.stub(.get("https://api.example.com/ping"), with: .status(200)) },
      for: routingRequest("GET", "https://evil.example.org/ping"))
    #expect(host.contains("- host: expected api.example.com, got evil.example.org\n"))

    let (scheme, _) = unmatchedReport(
      stubs: { $0.stub(.get("https://api.example.com/ping"), with: .status(200)) },
      for: routingRequest("GET", "http://api.example.com/ping"))
    #expect(scheme.contains("- scheme: expected https, got http\n"))
    #expect(!scheme.contains("port:"))

    let (port, _) = unmatchedReport(
      stubs: { $0.stub(.get("https://api.example.com/ping"), with: .status(200)) },
      for: routingRequest("GET", "https://api.example.com:8443/ping"))
    #expect(port.contains("- port: expected 443 (the default), got 8443\n"))
  }

  @Test func reportNamesPathAndBodyDifferences() {
    let (path, _) = unmatchedReport(
      stubs: { $0.stub(.get("/users/{login}/repos"), with: .status(200)) },
      for: routingRequest("GET", "https://e.com/users/octocat/gists"))
    #expect(
      path.contains(
        #"- path: expected /users/{login}/repos, got /users/octocat/gists (segment 3: expected "repos", got "gists")"#
      ))

    let (body, _) = unmatchedReport(
      stubs: { $0.stub(.post("/items").jsonBody(["count": 2]), with: .status(201)) },
      for: routingRequest("POST", "https://e.com/items", body: Data(#"{"count":3}"#.utf8)))
    #expect(body.contains("- body $.count: expected 2, got 3"))
  }

  @Test func aJSONBodyDifferenceIsPinpointedByItsPath() {
    struct Item: Encodable, Sendable {
      let id: Int
      let done: Bool
    }
    struct Bulk: Encodable, Sendable {
      let items: [Item]
      let owner: String
    }
    let expected = Bulk(items: (1...30).map { Item(id: $0, done: $0 == 18) }, owner: "me")
    let sent = Bulk(items: (1...30).map { Item(id: $0, done: false) }, owner: "me")
    let body = (try? JSONEncoder().encode(sent)) ?? Data()
    let (report, _) = unmatchedReport(
      stubs: { $0.stub(.post("/bulk").jsonBody(expected), with: .status(201)) },
      for: routingRequest("POST", "https://e.com/bulk", body: body))
    #expect(report.contains("- body $.items[17].done: expected true, got false\n"))
    let (shorter, _) = unmatchedReport(
      stubs: { $0.stub(.post("/bulk").jsonBody(["a": [1, 2]]), with: .status(201)) },
      for: routingRequest("POST", "https://e.com/bulk", body: Data(#"{"a":[1,2,3],"b":1}"#.utf8)))
    #expect(shorter.contains("- body $.a.count: expected 2, got 3\n"))
  }

  @Test func closestStubsComeFirstWithEveryDifference() throws {
    let (report, _) = unmatchedReport(
      stubs: { mock in
        mock.stub(.get("/orders/{id}"), with: .status(200))
        mock.stub(.post("/users/octocat").header("Authorization"), with: .status(200))
        mock.stub(.get("/users/octocat"), with: .status(200))
      },
      for: routingRequest("POST", "https://e.com/users/octocat"))
    let exact = try #require(report.range(of: "1. GET /users/octocat (registered"))
    let header = try #require(report.range(of: "2. POST /users/octocat header Authorization"))
    let far = try #require(report.range(of: "3. GET /orders/{id}"))
    #expect(exact.lowerBound < header.lowerBound)
    #expect(header.lowerBound < far.lowerBound)
    let farReasons = report[far.upperBound...]
    #expect(farReasons.contains("- method: expected GET, got POST"))
    #expect(farReasons.contains("- path: expected /orders/{id}, got /users/octocat"))
  }

  @Test func reportListsAtMostTenStubsAndCountsTheRest() {
    let (report, _) = unmatchedReport(
      stubs: { mock in
        for number in 0..<13 { mock.stub(.get("/items/\(number)"), with: .status(200)) }
      },
      for: routingRequest("GET", "https://e.com/other"))
    #expect(report.contains("  10. GET /items/"))
    #expect(!report.contains("  11. "))
    #expect(report.contains("  … and 3 more\n"))
  }

  @Test func mockWithoutStubsSuggestsOne() {
    let (report, _) = unmatchedReport(
      stubs: { _ in }, for: routingRequest("DELETE", "https://e.com/items/1?force=true"))
    #expect(report.contains("The mock has no stubs. Add one with mock.stub(_:with:), for example:"))
    #expect(report.contains(#"  mock.stub(.delete("/items/1"), with: .status(200))"#))

    let (custom, _) = unmatchedReport(
      stubs: { _ in }, for: routingRequest("OPTIONS", "https://e.com/items"))
    #expect(custom.contains(#"  mock.stub(.method("OPTIONS", "/items"), with: .status(200))"#))
  }

  @Test func unmatchedRequestsAreListed() {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .status(200))
    route(mock, "GET", "https://e.com/a")
    expectReport(containing: "No stub matches GET https://e.com/b") {
      route(mock, "GET", "https://e.com/b")
    }
    #expect(mock.unmatchedRequests.map { $0.url?.path } == ["/b"])
    #expect(mock.requests.count == 2)
  }

  // MARK: - respond(with:)

  @Test func respondPolicyAnswersQuietlyAndStillRecordsTheRequest() {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    mock.stub(.get("/known"), with: .status(200))
    #expect(route(mock, "GET", "https://e.com/known").status == 200)
    let answer = route(mock, "GET", "https://e.com/unknown")
    #expect(answer.status == 404)
    #expect(answer.error == nil)
    #expect(mock.unmatchedRequests.map { $0.url?.path } == ["/unknown"])

    let line = #line + 2
    expectReport {
      #expect(!mock.verifyNoUnmatchedRequests())
    } matching: { report in
      report.message == "1 request(s) matched no stub:\n  1. GET https://e.com/unknown\n"
        && report.line == line
    }
  }

  @Test func verifyNoUnmatchedRequestsPassesWhenEveryRequestMatched() {
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(200))
    route(mock, "GET", "https://e.com/a")
    #expect(mock.verifyNoUnmatchedRequests())
  }

  @Test func respondPolicyWithAnUnusableResponseFailsAtTheMock() {
    let line = #line + 1
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .file("Fixtures/nope.json", in: .module))
    expectReport {
      #expect(route(mock, "GET", "https://e.com/x").urlErrorCode == .resourceUnavailable)
    } matching: { report in
      report.message.contains("Fixtures/nope.json") && report.line == line
    }
  }

  // MARK: - passThrough(to:)

  @Test func passThroughForwardsToAnotherSession() {
    let backend = URLSessionMock()
    backend.stub(.post("/forwarded"), with: .text("from backend", status: 202))
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .passThrough(to: backend)
    mock.stub(.get("/local"), with: .text("local"))

    #expect(route(mock, "GET", "https://e.com/local").text == "local")
    let forwarded = route(
      mock, "POST", "https://e.com/forwarded", headers: ["X-A": "1"], body: Data("b".utf8))
    #expect(forwarded.status == 202)
    #expect(forwarded.text == "from backend")
    #expect(backend.requests.count == 1)
    #expect(backend.requests.first?.httpBody == Data("b".utf8))
    #expect(backend.requests.first?.value(forHTTPHeaderField: "X-A") == "1")
    #expect(mock.unmatchedRequests.map { $0.url?.path } == ["/forwarded"])
  }

  @Test func passThroughDeliversTheOtherSessionsError() {
    let backend = URLSessionMock(error: URLError(.cannotConnectToHost))
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .passThrough(to: backend)
    #expect(route(mock, "GET", "https://e.com/x").urlErrorCode == .cannotConnectToHost)
  }

  @Test func aMockThatPassesThroughToItselfFailsInsteadOfRecursing() {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .passThrough(to: mock)
    #expect(sendThroughLoop(mock, reporting: "leads back to itself") == .resourceUnavailable)
  }

  @Test func aSpyAndAMockThatForwardToEachOtherStopAfterSixteenForwards() {
    let mock = URLSessionMock()
    let spy = SpySession(wrapping: mock)
    mock.unmatchedRequestPolicy = .passThrough(to: spy)
    defer { mock.unmatchedRequestPolicy = .fail }  // the loop holds both doubles
    #expect(sendThroughLoop(spy) == .resourceUnavailable)
    // Sixteen forwards, alternately: the spy's nine requests and the mock's eight.
    #expect(spy.requests.count == 9)
    #expect(mock.requests.count == 8)
  }
}
