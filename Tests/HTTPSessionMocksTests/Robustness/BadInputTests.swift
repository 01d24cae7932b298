import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Every public entry that takes text or files, given bad input, reports a failure that names
/// the input and what is wrong with it (or returns a typed failure), and never crashes or hangs.
@Suite struct BadInputTests {
  private func url(_ text: String) -> URL { URL(string: "https://example.com" + text)! }

  private func request(_ path: String, method: String = "GET", body: Data? = nil) -> URLRequest {
    var request = URLRequest(url: url(path))
    request.httpMethod = method
    request.httpBody = body
    return request
  }

  /// Sends `request` through `mock`'s completion-handler API and returns what the handler got.
  private func send(_ mock: URLSessionMock, _ request: URLRequest) -> DeliveredOutcome? {
    let ledger = HandlerLedger(count: 1)
    mock.dataTask(with: request, completionHandler: ledger.handler(0)).resume()
    return ledger.outcome(0)
  }

  // MARK: - Patterns

  static let malformedPatterns: [(pattern: String, reason: String)] = [
    ("{unclosed", "a pattern is a path starting with \"/\""),
    ("/users/{unclosed", "has an unclosed \"{\""),
    ("/users/{}", "empty parameter name \"{}\""),
    ("{}", "a pattern is a path starting with \"/\""),
    ("", "the pattern is empty"),
    ("//", "segment 1 of the path is empty (\"//\")"),
    ("/a//b", "segment 2 of the path is empty (\"//\")"),
    ("/ユーザー/{名前}", "the parameter name \"名前\" in segment 2 may use only ASCII"),
    ("/files/{a}.{b}", "has more than one parameter"),
    ("/a}/b", "has a \"}\" with no \"{\" before it"),
    ("/{id}/{id}", "the parameter {id} appears twice"),
    ("https:///path", "the URL has no host"),
    ("https://{host}/a", "parameters are allowed in the path only, not in the host"),
    ("https://example.com:99999/a", "\"99999\" is not a port number"),
    ("/a#top", "a fragment (#top) is never sent with a request"),
    ("/search?=swift", "the query item \"=swift\" has no name"),
    ("/search?q={q}", "parameters are allowed in the path only, not in the query"),
    ("1://x/a", "\"1\" is not a URL scheme"),
  ]

  @Test(arguments: malformedPatterns)
  func aMalformedPatternIsReportedWhereverItIsUsed(pattern: String, reason: String) {
    let matcher = RequestMatcher.get(pattern)
    // The problem names the pattern, then says what is wrong.
    let named = "The pattern \"\(pattern)\" is malformed: "
    #expect(matcher.problems.count == 1)
    #expect(matcher.problems.first?.hasPrefix(named) == true, "\(matcher.problems)")
    #expect(matcher.problems.first?.contains(reason) == true, "\(matcher.problems)")
    #expect(!matcher.matches(request("/users/octocat")))

    let mock = URLSessionMock()
    expectReport {
      mock.stub(matcher, with: .status(200))
    } matching: { report in
      report.message.contains("The stub for GET \(pattern) can never match: \(named)")
        && report.message.contains(reason)
    }
    expectReport {
      mock.verify(matcher, called: .never)
    } matching: { report in
      report.message.contains("The matcher GET \(pattern) can never match: \(named)")
        && report.message.contains(reason)
    }
    expectReport {
      mock.verifyInOrder([.any, matcher])
    } matching: { report in
      report.message.contains(named) && report.message.contains(reason)
    }
    #expect(mock.requests(matching: matcher).isEmpty)
    // Combined with a good matcher it is still reported, once.
    #expect((.get("/ok") || matcher).problems == matcher.problems)
    #expect((!matcher && .header("X")).problems == matcher.problems)
  }

  @Test func aNonASCIILiteralPatternMatchesThePercentEncodedRequest() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/ユーザー/{id}/café")) { _, parameters in .text(parameters["id"] ?? "") }
    let path =
      "/\("ユーザー".addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!)"
      + "/%E2%9C%93/caf%C3%A9"
    #expect(send(mock, request(path)) == .success(status: 200, body: "✓"))
    #expect(mock.verify(.get("/ユーザー/✓/café")))
  }

  @Test func tenThousandSegmentPathsRouteWithoutOverflowingTheStack() {
    let segments = 10_000
    let literal = "/" + (0..<segments).map { "s\($0)" }.joined(separator: "/")
    let parameters = "/" + (0..<segments).map { "{p\($0)}" }.joined(separator: "/")
    let mock = URLSessionMock()
    let exact = mock.stub(.get(literal), with: .text("exact"))
    let pattern = mock.stub(.post(parameters)) { _, values in
      .text("\(values.count) \(values["p9999"] ?? "")")
    }
    #expect(exact.matcher.problems.isEmpty && pattern.matcher.problems.isEmpty)

    #expect(send(mock, request(literal)) == .success(status: 200, body: "exact"))
    #expect(
      send(mock, request(literal, method: "POST")) == .success(status: 200, body: "10000 s9999"))
    #expect(mock.verify(.get(literal), called: .once))
    #expect(mock.verify(.post(parameters), called: .once))

    // One segment off at the very end: no match, found without recursion either.
    let near = String(literal.dropLast() + "X")
    #expect(!RequestMatcher.get(literal).matches(request(near)))
    #expect(!RequestMatcher.post(parameters).matches(request(near)))
    // Unmatched requests this long, answered by the policy (a report would print them whole).
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    #expect(send(mock, request(near)) == .success(status: 404, body: ""))
    #expect(send(mock, request(literal + literal)) == .success(status: 404, body: ""))
    #expect(mock.unmatchedRequests.count == 2)
  }

  @Test func aLongUnmatchedPathIsReportedWithTheSegmentThatDiffers() {
    let literal = "/" + (0..<300).map { "s\($0)" }.joined(separator: "/")
    let mock = URLSessionMock()
    mock.stub(.get(literal), with: .text("exact"))
    expectReport {
      #expect(send(mock, request(literal.dropLast() + "X")) == .failure(.resourceUnavailable))
    } matching: { report in
      report.message.contains("No stub matches GET https://example.com/s0/s1/s2")
        && report.message.contains("segment 300: expected \"s299\", got \"s29X\"")
    }
    expectReport {
      #expect(send(mock, request(literal + literal)) == .failure(.resourceUnavailable))
    } matching: { report in
      report.message.contains("600 segment(s), expected 300")
    }
  }

  @Test func queryNamesAndValuesInAnyScriptMatchTheirPercentEncodedForm() {
    let sent = request("/s?a%20b=c%26d&%C3%BC=%E2%9C%93&flag&=empty-name&q=one+two")
    #expect(RequestMatcher.get("/s").query(["a b": "c&d", "ü": "✓", "flag": nil]).matches(sent))
    #expect(RequestMatcher.get("/s?ü=✓&q=one two").matches(sent))
    #expect(RequestMatcher.query(["": "empty-name"]).matches(sent))
    #expect(!RequestMatcher.query(["ü": "x"]).matches(sent))
    #expect(!RequestMatcher.query(["missing": nil]).matches(sent))
  }

  // MARK: - Regular expressions

  @Test(arguments: ["(", "[a-", "*", "a{2,1}", "(?<name", "\\"])
  func anInvalidRegularExpressionIsReportedNamingIt(expression: String) {
    let matcher = RequestMatcher.regex(expression)
    #expect(matcher.problems.count == 1)
    #expect(
      matcher.problems.first?.hasPrefix("The regular expression /\(expression)/ does not compile")
        == true
    )
    #expect(!matcher.matches(request("/(")))
    let mock = URLSessionMock()
    expectReport {
      mock.stub(matcher, with: .status(200))
    } matching: { report in
      report.message.contains("The regular expression /\(expression)/ does not compile")
    }
    expectReport {
      mock.verify(matcher)
    } matching: { report in
      report.message.contains("The regular expression /\(expression)/ does not compile")
    }
  }

  // MARK: - Fixture files

  /// Fixture names by what is wrong with them (the names are kept out of the test's arguments,
  /// where a 4,500-character one would flood the log).
  static let badFixtures: [String: String] = [
    "missing": "missing.json",
    "missing in a folder": "Fixtures/nope.txt",
    "a folder": "Fixtures",
    "empty": "",
    "non-ASCII": "ファイル/なし.json",
    "a NUL byte": "bad\u{0}name.json",
    "longer than PATH_MAX": String(repeating: "long/", count: 900) + "x.json",
  ]

  @Test(arguments: badFixtures.keys.sorted())
  func aMissingOrUnreadableFixtureFailsTheRequestNamingTheFile(problem: String) throws {
    let name = try #require(Self.badFixtures[problem])
    let mock = URLSessionMock()
    mock.stub(.get("/fixture"), with: .file(name, in: .module))
    expectReport {
      #expect(send(mock, request("/fixture")) == .failure(.resourceUnavailable))
    } matching: { report in
      report.message.contains("The fixture file \"\(name)\" could not be read from ")
        && report.message.contains("GET https://example.com/fixture")
    }

    let spy = SpySession()
    let task = spy.dataTask(with: url("/fixture")) { _, _, _ in }
    task.resume()
    expectReport {
      #expect(spy.complete(task, with: .file(name, in: .module)))
    } matching: { report in
      report.message.contains("Cannot complete task #1 ")
        && report.message.contains("The fixture file \"\(name)\" could not be read")
    }
    #expect((task.error as? URLError)?.code == .resourceUnavailable)
  }

  @Test func aReadableFixtureIsServedAsJSON() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/user"), with: .file("Fixtures/user.json", in: .module))
    let outcome = try #require(send(mock, request("/user")))
    guard case .success(200, let body) = outcome else {
      Issue.record("got \(outcome)")
      return
    }
    #expect(body.contains("\"login\""))
  }

  // MARK: - JSON

  @Test(arguments: [
    ("not json", "got a body that is not JSON: \"not json\""),
    ("{\"a\": }", #"got a body that is not JSON: "{\"a\": }""#),
    ("", "got no body"),
    ("\u{FF}\u{FE}", "got a body that is not JSON"),
  ])
  func aBodyThatIsNotJSONIsReportedNamingIt(body: String, complaint: String) {
    let mock = URLSessionMock()
    mock.stub(.post("/items").jsonBody(["a": 1]), with: .status(201))
    let sent = request("/items", method: "POST", body: body.isEmpty ? nil : Data(body.utf8))
    expectReport {
      #expect(send(mock, sent) == .failure(.resourceUnavailable))
    } matching: { report in
      report.message.contains("No stub matches POST https://example.com/items")
        && report.message.contains(complaint)
    }
    expectReport {
      mock.verify(.post("/items").jsonBody(["a": 1]), called: .once)
    } matching: { report in
      report.message.contains(complaint)
    }
  }

  @Test func binaryBodiesAreDescribedBySize() {
    let mock = URLSessionMock()
    mock.stub(.post("/items").jsonBody(["a": 1]), with: .status(201))
    let binary = Data([0xFF, 0xFE, 0x00, 0xC3] + Array(repeating: 0x80, count: 300))
    expectReport {
      #expect(send(mock, request("/items", method: "POST", body: binary)) != nil)
    } matching: { report in
      report.message.contains("got a body that is not JSON: 304 bytes of binary data")
    }
  }

  @Test(arguments: ["100,000 unclosed [", "100,000 balanced [ ]", "50,000 nested objects"])
  func deeplyNestedJSONIsRejectedWithoutOverflowingTheStack(shape: String) {
    let body: String
    switch shape {
    case "100,000 unclosed [": body = String(repeating: "[", count: 100_000)
    case "100,000 balanced [ ]":
      body = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    default:
      body =
        String(repeating: "{\"a\":", count: 50_000) + "1" + String(repeating: "}", count: 50_000)
    }
    let mock = URLSessionMock()
    mock.stub(.post("/deep").jsonBody([[1]]), with: .status(201))
    let sent = request("/deep", method: "POST", body: Data(body.utf8))
    #expect(!RequestMatcher.jsonBody([[1]]).matches(sent), "\(shape)")
    expectReport {
      #expect(send(mock, sent) == .failure(.resourceUnavailable))
    } matching: { report in
      report.message.contains(
        "got a body that is not JSON: \"\(body.prefix(120).replacing("\"", with: "\\\""))…\" ("
          + "\(body.utf8.count) bytes)")
    }
  }

  @Test func valuesThatCannotBeJSONAreReportedWhenUsed() {
    #expect(URLSessionMock(jsonDict: ["when": Date()]) == nil)
    #expect(URLSessionMock(jsonDict: ["n": Double.nan]) == nil)
    let matcher = RequestMatcher.jsonBody(["n": Double.nan])
    #expect(matcher.problems.first?.contains("cannot be encoded as JSON") == true)

    let mock = URLSessionMock()
    mock.stub(.get("/nan"), with: .json(["n": Double.infinity]))
    mock.stub(.get("/date"), with: .json(["when": Date()] as [String: Any]))
    expectReport {
      #expect(send(mock, request("/nan")) == .failure(.resourceUnavailable))
    } matching: { report in
      report.message.contains("The value for .json(...) cannot be encoded as JSON")
    }
    expectReport {
      #expect(send(mock, request("/date")) == .failure(.resourceUnavailable))
    } matching: { report in
      report.message.contains("The object for .json(...) cannot be represented as JSON")
    }
  }

  // MARK: - Big bodies

  @Test func aHundredMegabyteBodyGoesThroughStubVerifyAndBodyMatcher() async throws {
    let size = 100_000_000
    var body = Data(repeating: UInt8(ascii: "a"), count: size)
    body[size - 1] = UInt8(ascii: "b")
    var other = body
    other[size - 1] = UInt8(ascii: "c")
    let answer = Data(repeating: UInt8(ascii: "z"), count: size)

    let mock = URLSessionMock()
    mock.stub(.post("/upload").body(body), with: .data(answer))
    let (data, response) = try await mock.upload(
      for: request("/upload", method: "POST"), from: body)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect(data == answer)

    #expect(mock.verify(.post("/upload").body(body), called: .once))
    #expect(mock.requests(matching: .body(body)).count == 1)
    #expect(mock.requests(matching: .body(other)).isEmpty)
    #expect(mock.requests.first?.httpBody == body)

    expectReport {
      #expect(send(mock, request("/upload", method: "POST", body: other)) != nil)
    } matching: { report in
      report.message.contains("body: expected \"aaaa")
        && report.message.contains("(100000000 bytes), got \"aaaa")
    }
  }

  // MARK: - Headers

  @Test func headerNamesMatchInAnyCase() {
    var sent = request("/h")
    sent.setValue("application/json", forHTTPHeaderField: "Content-Type")
    sent.setValue("Bearer T", forHTTPHeaderField: "authorization")
    for name in ["Content-Type", "content-type", "CONTENT-TYPE", "cOnTeNt-TyPe"] {
      #expect(RequestMatcher.header(name).matches(sent), "\(name)")
      #expect(RequestMatcher.header(name, "application/json").matches(sent), "\(name)")
    }
    #expect(RequestMatcher.header("Authorization", "Bearer T").matches(sent))
    // Values compare exactly.
    #expect(!RequestMatcher.header("Content-Type", "APPLICATION/JSON").matches(sent))
    // Odd names are simply missing.
    for name in ["", " ", "X-Ünïcödé", "Content-Type\n"] {
      #expect(!RequestMatcher.header(name).matches(sent), "\(name.debugDescription)")
    }

    let mock = URLSessionMock()
    mock.stub(.any, with: .status(200))
    mock.dataTask(with: sent) { _, _, _ in }.resume()
    expectReport {
      mock.verify(.header("x-missing", "1"))
    } matching: { report in
      report.message.contains("header x-missing: missing")
    }
    expectReport {
      mock.verify(.header("content-type", "text/plain"))
    } matching: { report in
      report.message.contains(
        "header content-type: expected \"text/plain\", got \"application/json\"")
    }
  }

  @Test func aContentTypeGivenInAnyCaseReplacesTheDefault() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/json"), with: .json(["a": 1], headers: ["content-type": "text/x-json"]))
    mock.stub(.get("/text"), with: .text("hi", headers: ["CONTENT-TYPE": "text/x-plain"]))
    mock.stub(.get("/plain"), with: .json(["a": 1]))
    for (path, expected) in [
      ("/json", "text/x-json"), ("/text", "text/x-plain"), ("/plain", "application/json"),
    ] {
      let response = Shared<HTTPURLResponse?>(nil)
      mock.dataTask(with: url(path)) { _, answer, _ in
        response.withLock { $0 = answer as? HTTPURLResponse }
      }.resume()
      let answer = try #require(response.current)
      let names = answer.allHeaderFields.keys.compactMap { $0 as? String }
      #expect(names.filter { $0.lowercased() == "content-type" }.count == 1, "\(path): \(names)")
      #expect(answer.value(forHTTPHeaderField: "Content-Type") == expected)
    }
  }
}
