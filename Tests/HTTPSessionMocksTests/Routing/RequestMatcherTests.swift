import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct RequestMatcherTests {
  private struct Item: Codable, Sendable {
    let name: String
    let count: Int
  }

  // MARK: - Methods

  @Test func anyMatchesEveryRequest() {
    #expect(RequestMatcher.any.matches(routingRequest("GET", "https://example.com/")))
    #expect(RequestMatcher.any.matches(routingRequest("DELETE", "http://other.test:8080/a/b?c=d")))
    #expect(RequestMatcher.any.matches(routingRequest("BREW", "coffee://pot/1")))
    #expect(RequestMatcher.any.description == "any request")
  }

  @Test func methodFactoriesMatchTheirMethodOnly() {
    let factories: [(String, (String) -> RequestMatcher)] = [
      ("GET", RequestMatcher.get), ("POST", RequestMatcher.post), ("PUT", RequestMatcher.put),
      ("PATCH", RequestMatcher.patch), ("DELETE", RequestMatcher.delete),
      ("HEAD", RequestMatcher.head),
    ]
    for (method, factory) in factories {
      let matcher = factory("/items")
      #expect(matcher.description == "\(method) /items")
      for (other, _) in factories {
        let request = routingRequest(other, "https://example.com/items")
        #expect(matcher.matches(request) == (other == method), "\(matcher) vs \(other)")
      }
    }
  }

  @Test func methodIsComparedCaseInsensitively() {
    let matcher = RequestMatcher.method("patch", "/items/1")
    #expect(matcher.description == "PATCH /items/1")
    #expect(matcher.matches(routingRequest("PATCH", "https://example.com/items/1")))
    #expect(matcher.matches(routingRequest("Patch", "https://example.com/items/1")))
    #expect(!matcher.matches(routingRequest("PUT", "https://example.com/items/1")))
    #expect(RequestMatcher.get("/a").matches(routingRequest("get", "https://example.com/a")))
  }

  @Test func customMethodsMatchThroughMethodFactory() {
    let matcher = RequestMatcher.method("OPTIONS", "/items")
    #expect(matcher.matches(routingRequest("OPTIONS", "https://example.com/items")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/items")))
  }

  @Test func urlMatchesAnyMethod() {
    let matcher = RequestMatcher.url("/items/{id}")
    for method in ["GET", "POST", "PUT", "DELETE", "OPTIONS"] {
      #expect(matcher.matches(routingRequest(method, "https://example.com/items/7")))
    }
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/items")))
  }

  // MARK: - Paths and hosts

  @Test func pathPatternMatchesAnySchemeHostAndPort() {
    let matcher = RequestMatcher.get("/users/octocat")
    #expect(matcher.matches(routingRequest("GET", "https://api.example.com/users/octocat")))
    #expect(matcher.matches(routingRequest("GET", "http://localhost:8080/users/octocat")))
    #expect(matcher.matches(routingRequest("GET", "myapp://anything/users/octocat")))
    #expect(!matcher.matches(routingRequest("GET", "https://api.example.com/users/other")))
  }

  @Test func absolutePatternIsBoundToSchemeAndHost() {
    let matcher = RequestMatcher.get("https://api.example.com/ping")
    #expect(matcher.matches(routingRequest("GET", "https://api.example.com/ping")))
    #expect(matcher.matches(routingRequest("GET", "https://API.Example.com/ping")))
    #expect(matcher.matches(routingRequest("GET", "https://api.example.com:443/ping")))
    #expect(!matcher.matches(routingRequest("GET", "http://api.example.com/ping")))
    #expect(!matcher.matches(routingRequest("GET", "https://evil.example.org/ping")))
    #expect(!matcher.matches(routingRequest("GET", "https://api.example.com/pong")))
  }

  @Test func absolutePatternIsBoundToItsPort() {
    let explicit = RequestMatcher.get("http://localhost:8080/health")
    #expect(explicit.matches(routingRequest("GET", "http://localhost:8080/health")))
    #expect(!explicit.matches(routingRequest("GET", "http://localhost:9090/health")))
    #expect(!explicit.matches(routingRequest("GET", "http://localhost/health")))

    let implicit = RequestMatcher.get("https://api.example.com/health")
    #expect(!implicit.matches(routingRequest("GET", "https://api.example.com:8443/health")))
  }

  @Test func absolutePatternWithIPv6HostMatchesThatHost() {
    let matcher = RequestMatcher.get("http://[::1]:8080/health")
    #expect(matcher.problems.isEmpty)
    #expect(matcher.matches(routingRequest("GET", "http://[::1]:8080/health")))
    #expect(!matcher.matches(routingRequest("GET", "http://[::2]:8080/health")))
  }

  @Test func absolutePatternWithoutPathMatchesTheRoot() {
    let matcher = RequestMatcher.get("https://api.example.com")
    #expect(matcher.matches(routingRequest("GET", "https://api.example.com")))
    #expect(matcher.matches(routingRequest("GET", "https://api.example.com/")))
    #expect(!matcher.matches(routingRequest("GET", "https://api.example.com/a")))
    #expect(RequestMatcher.get("/").matches(routingRequest("GET", "https://example.com")))
  }

  @Test func parameterMatchesExactlyOneNonEmptySegment() {
    let matcher = RequestMatcher.get("/users/{login}")
    #expect(matcher.matches(routingRequest("GET", "https://example.com/users/octocat")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/users/octo/cat")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/users/")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/users")))
  }

  @Test func parameterMayHaveLiteralPrefixAndSuffix() {
    let matcher = RequestMatcher.get("/files/{name}.json")
    #expect(matcher.matches(routingRequest("GET", "https://example.com/files/report.json")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/files/report.xml")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/files/.json")))

    let versioned = RequestMatcher.get("/api/v{version}/status")
    #expect(versioned.matches(routingRequest("GET", "https://example.com/api/v2/status")))
    #expect(!versioned.matches(routingRequest("GET", "https://example.com/api/2/status")))
  }

  @Test func parameterValuesReachDynamicResponses() {
    let mock = URLSessionMock()
    mock.stub(.get("/files/{name}.json")) { _, parameters in
      .text(parameters["name"] ?? "(missing)")
    }
    mock.stub(.get("/api/v{version}/users/{login}")) { _, parameters in
      .text("\(parameters["version"] ?? "?") \(parameters["login"] ?? "?")")
    }
    #expect(route(mock, "GET", "https://example.com/files/report.json").text == "report")
    #expect(route(mock, "GET", "https://example.com/api/v3/users/j%C3%BCrgen").text == "3 jürgen")
  }

  @Test func trailingSlashIsNotIgnored() {
    #expect(
      !RequestMatcher.get("/users/octocat").matches(
        routingRequest("GET", "https://example.com/users/octocat/")))
    #expect(
      !RequestMatcher.get("/users/octocat/").matches(
        routingRequest("GET", "https://example.com/users/octocat")))
    #expect(
      RequestMatcher.get("/users/octocat/").matches(
        routingRequest("GET", "https://example.com/users/octocat/")))
  }

  @Test func pathsComparePercentDecoded() {
    let request = routingRequest("GET", "https://example.com/docs/my%20report.txt")
    #expect(RequestMatcher.get("/docs/my report.txt").matches(request))
    #expect(RequestMatcher.get("/docs/my%20report.txt").matches(request))
    #expect(!RequestMatcher.get("/docs/my_report.txt").matches(request))
  }

  @Test func nonASCIIPathsMatch() {
    let request = routingRequest("GET", "https://example.com/caf%C3%A9/men%C3%BC")
    #expect(RequestMatcher.get("/café/menü").matches(request))
    #expect(RequestMatcher.get("/café/{item}").matches(request))
    #expect(!RequestMatcher.get("/cafe/menu").matches(request))
  }

  @Test func encodedSlashStaysInsideOneSegment() {
    let request = routingRequest("GET", "https://example.com/files/a%2Fb")
    #expect(RequestMatcher.get("/files/{name}").matches(request))
    #expect(!RequestMatcher.get("/files/a/b").matches(request))
  }

  @Test func aRelativeURLsPathIsReadFromItsFirstSegment() {
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: .status(204))
    let base = URL(string: "https://api.example.com/")!
    let relative = URL(string: "users/octocat", relativeTo: base)!
    #expect(route(mock, URLRequest(url: relative)).status == 204)
  }

  // MARK: - Queries

  @Test func queryInPatternIsASubset() {
    let matcher = RequestMatcher.get("/search?q=swift")
    #expect(matcher.matches(routingRequest("GET", "https://example.com/search?q=swift")))
    #expect(matcher.matches(routingRequest("GET", "https://example.com/search?page=2&q=swift")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/search?q=kotlin")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/search")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/find?q=swift")))
  }

  @Test func queryItemWithoutValueAcceptsAnyValue() {
    let inPattern = RequestMatcher.get("/search?page")
    let refined = RequestMatcher.get("/search").query(["page": nil])
    for matcher in [inPattern, refined] {
      #expect(matcher.matches(routingRequest("GET", "https://example.com/search?page=3")))
      #expect(matcher.matches(routingRequest("GET", "https://example.com/search?page=")))
      #expect(!matcher.matches(routingRequest("GET", "https://example.com/search?q=3")))
    }
  }

  @Test func queryRefinementRequiresEveryItem() {
    let matcher = RequestMatcher.get("/search").query(["q": "swift", "sort": "stars"])
    #expect(matcher.description == "GET /search query q=swift&sort=stars")
    #expect(matcher.matches(routingRequest("GET", "https://example.com/search?sort=stars&q=swift")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/search?q=swift")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/search?sort=stars")))
  }

  @Test func repeatedQueryItemMatchesAnyOfItsValues() {
    let matcher = RequestMatcher.get("/items?tag=b")
    #expect(matcher.matches(routingRequest("GET", "https://example.com/items?tag=a&tag=b")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/items?tag=a&tag=c")))
  }

  @Test func queryValuesComparePercentDecodedWithPlusAsSpace() {
    let encoded = routingRequest("GET", "https://example.com/search?q=swift%20testing")
    let plus = routingRequest("GET", "https://example.com/search?q=swift+testing")
    for request in [encoded, plus] {
      #expect(RequestMatcher.get("/search?q=swift testing").matches(request))
      #expect(RequestMatcher.get("/search?q=swift%20testing").matches(request))
      #expect(RequestMatcher.get("/search?q=swift+testing").matches(request))
      #expect(RequestMatcher.get("/search").query(["q": "swift testing"]).matches(request))
    }
    let ampersand = routingRequest("GET", "https://example.com/search?q=a%26b")
    #expect(RequestMatcher.get("/search?q=a%26b").matches(ampersand))
    #expect(RequestMatcher.get("/search").query(["q": "a&b"]).matches(ampersand))
  }

  @Test func pathPatternMayCarryAURLInItsQuery() {
    let matcher = RequestMatcher.get("/redirect?to=https://example.org/next")
    #expect(matcher.problems.isEmpty)
    #expect(
      matcher.matches(
        routingRequest("GET", "https://example.com/redirect?to=https://example.org/next")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/redirect?to=elsewhere")))
  }

  // MARK: - Regular expressions and closures

  @Test func regexRunsOnTheAbsoluteURL() {
    let matcher = RequestMatcher.regex(#"^https://api\.example\.com/v[0-9]+/"#)
    #expect(matcher.description == #"URL ~ /^https://api\.example\.com/v[0-9]+//"#)
    #expect(matcher.matches(routingRequest("GET", "https://api.example.com/v2/users")))
    #expect(matcher.matches(routingRequest("DELETE", "https://api.example.com/v10/users/1")))
    #expect(!matcher.matches(routingRequest("GET", "http://api.example.com/v2/users")))
    #expect(!matcher.matches(routingRequest("GET", "https://api.example.com/vX/users")))
  }

  @Test func unanchoredRegexMatchesAnywhereIncludingTheQuery() {
    let matcher = RequestMatcher.regex("token=[a-z]+")
    #expect(matcher.matches(routingRequest("GET", "https://example.com/a?token=abc")))
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/a?token=123")))
  }

  @Test func closureMatcherDecidesAndNamesItself() {
    let hasTrace = RequestMatcher("has a trace id") {
      $0.value(forHTTPHeaderField: "X-Trace") != nil
    }
    #expect(hasTrace.description == "has a trace id")
    #expect(hasTrace.matches(routingRequest("GET", "https://e.com/a", headers: ["X-Trace": "1"])))
    #expect(!hasTrace.matches(routingRequest("GET", "https://e.com/a")))
  }

  // MARK: - Headers and bodies

  @Test func headerNameIsCaseInsensitiveAndValueOptional() {
    let request = routingRequest("GET", "https://e.com/me", headers: ["authorization": "Bearer t"])
    #expect(RequestMatcher.header("Authorization").matches(request))
    #expect(RequestMatcher.header("AUTHORIZATION", "Bearer t").matches(request))
    #expect(!RequestMatcher.header("Authorization", "Bearer other").matches(request))
    #expect(!RequestMatcher.header("Authorization", "bearer t").matches(request))
    #expect(!RequestMatcher.header("Cookie").matches(request))
    #expect(
      RequestMatcher.get("/me").header("X-Trace", "abc").description
        == "GET /me header X-Trace: abc")
  }

  @Test func bodyMatchesExactBytes() {
    let matcher = RequestMatcher.post("/echo").body(Data("ping".utf8))
    #expect(matcher.matches(routingRequest("POST", "https://e.com/echo", body: Data("ping".utf8))))
    #expect(!matcher.matches(routingRequest("POST", "https://e.com/echo", body: Data("pong".utf8))))
    #expect(!matcher.matches(routingRequest("POST", "https://e.com/echo")))
    #expect(RequestMatcher.body(Data()).matches(routingRequest("POST", "https://e.com/echo")))
  }

  @Test func jsonBodyIgnoresKeyOrderAndWhiteSpace() {
    let matcher = RequestMatcher.post("/items").jsonBody(Item(name: "x", count: 2))
    let compact = Data(#"{"count":2,"name":"x"}"#.utf8)
    let spaced = Data("{\n  \"name\" : \"x\",\n  \"count\" : 2\n}".utf8)
    #expect(matcher.matches(routingRequest("POST", "https://e.com/items", body: compact)))
    #expect(matcher.matches(routingRequest("POST", "https://e.com/items", body: spaced)))
    let different = Data(#"{"count":3,"name":"x"}"#.utf8)
    #expect(!matcher.matches(routingRequest("POST", "https://e.com/items", body: different)))
    let extra = Data(#"{"count":2,"name":"x","more":true}"#.utf8)
    #expect(!matcher.matches(routingRequest("POST", "https://e.com/items", body: extra)))
  }

  @Test func jsonBodyComparesNumbersByValue() {
    let matcher = RequestMatcher.jsonBody(["count": 2])
    #expect(
      matcher.matches(routingRequest("POST", "https://e.com/a", body: Data(#"{"count":2.0}"#.utf8)))
    )
    #expect(
      !matcher.matches(
        routingRequest("POST", "https://e.com/a", body: Data(#"{"count":2.5}"#.utf8))))
    #expect(
      !matcher.matches(
        routingRequest("POST", "https://e.com/a", body: Data(#"{"count":"2"}"#.utf8))))
    #expect(
      !matcher.matches(
        routingRequest("POST", "https://e.com/a", body: Data(#"{"count":true}"#.utf8))))
    let flag = RequestMatcher.jsonBody(["flag": true])
    #expect(
      !flag.matches(routingRequest("POST", "https://e.com/a", body: Data(#"{"flag":1}"#.utf8))))
    let fraction = RequestMatcher.jsonBody(["ratio": 0.5])
    #expect(
      fraction.matches(
        routingRequest("POST", "https://e.com/a", body: Data(#"{"ratio":5e-1}"#.utf8))))
  }

  @Test func jsonBodyKeepsArrayOrder() {
    let matcher = RequestMatcher.jsonBody([1, 2, 3])
    #expect(matcher.matches(routingRequest("POST", "https://e.com/a", body: Data("[1,2,3]".utf8))))
    #expect(!matcher.matches(routingRequest("POST", "https://e.com/a", body: Data("[3,2,1]".utf8))))
  }

  @Test func jsonBodyRejectsBodiesThatAreNotJSONWithoutCrashing() {
    let matcher = RequestMatcher.jsonBody(["a": 1])
    let bodies: [Data?] = [
      nil, Data(), Data("not json".utf8), Data(#"{"a":1"#.utf8), Data([0xFF, 0xFE, 0x00]),
      Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8),
    ]
    for body in bodies {
      #expect(!matcher.matches(routingRequest("POST", "https://e.com/a", body: body)))
    }
  }

  @Test func jsonBodyWithUnencodableValueIsAProblem() {
    let matcher = RequestMatcher.jsonBody(["ratio": Double.nan])
    #expect(matcher.problems.count == 1)
    #expect(matcher.problems.first?.contains("cannot be encoded as JSON") == true)
    #expect(!matcher.matches(routingRequest("POST", "https://e.com/a", body: Data("{}".utf8))))
  }

  // MARK: - Combinators

  @Test func andRequiresBoth() {
    let matcher = RequestMatcher.get("/me") && .header("Authorization")
    #expect(
      matcher.matches(routingRequest("GET", "https://e.com/me", headers: ["Authorization": "t"])))
    #expect(!matcher.matches(routingRequest("GET", "https://e.com/me")))
    #expect(
      !matcher.matches(routingRequest("POST", "https://e.com/me", headers: ["Authorization": "t"])))
  }

  @Test func orAcceptsEither() {
    let matcher = RequestMatcher.get("/a") || .post("/b")
    #expect(matcher.description == "(GET /a or POST /b)")
    #expect(matcher.matches(routingRequest("GET", "https://e.com/a")))
    #expect(matcher.matches(routingRequest("POST", "https://e.com/b")))
    #expect(!matcher.matches(routingRequest("GET", "https://e.com/b")))
  }

  @Test func notInverts() {
    let matcher = RequestMatcher.get("/me") && !.header("Cookie")
    #expect(matcher.description == "GET /me not (header Cookie)")
    #expect(matcher.matches(routingRequest("GET", "https://e.com/me")))
    #expect(!matcher.matches(routingRequest("GET", "https://e.com/me", headers: ["Cookie": "a"])))
    #expect(!(!RequestMatcher.any).matches(routingRequest("GET", "https://e.com/me")))
  }

  @Test func orPassesTheParametersOfTheSideThatMatched() {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}") || .get("/people/{name}")) { _, parameters in
      .text(parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined())
    }
    #expect(route(mock, "GET", "https://e.com/users/octocat").text == "login=octocat")
    #expect(route(mock, "GET", "https://e.com/people/ada").text == "name=ada")
  }

  // MARK: - Malformed patterns

  @Test(arguments: [
    ("/users/{login", "unclosed"),
    ("/users/{}", "empty parameter name"),
    ("", "the pattern is empty"),
    ("/a//b", "\"//\""),
    ("/repos/{id}/issues/{id}", "{id} appears twice"),
    ("/files/{name}.{ext}", "more than one parameter"),
    ("users/{login}", "starting with \"/\""),
    ("/a}", "\"}\" with no \"{\""),
    ("/page#top", "fragment"),
    ("https://{host}/a", "not in the host"),
    ("https://example.com:http/a", "not a port number"),
    ("https:///a", "no host"),
    ("/search?{q}=1", "not in the query"),
    ("/search?=1", "has no name"),
    ("/users/{lo gin}", "may use only ASCII"),
  ])
  func malformedPatternsHaveProblems(pattern: String, expected: String) {
    let matcher = RequestMatcher.get(pattern)
    #expect(matcher.problems.count == 1)
    let problem = matcher.problems.first ?? ""
    #expect(problem.contains(expected), "\(problem)")
    #expect(problem.contains("\"\(pattern)\""), "names the pattern: \(problem)")
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/users/octocat")))
  }

  @Test func badRegexIsAProblem() {
    let matcher = RequestMatcher.regex("(unclosed")
    #expect(
      matcher.problems == [
        "The regular expression /(unclosed/ does not compile (NSRegularExpression rejects it); "
          + "check its brackets, parentheses, quantifiers and escapes."
      ])
    #expect(!matcher.matches(routingRequest("GET", "https://example.com/(unclosed")))
  }

  @Test func wellFormedMatchersHaveNoProblems() {
    let matchers: [RequestMatcher] = [
      .any, .get("/"), .get("/users/{login}"), .post("https://api.example.com:8443/a?b=c"),
      .url("/files/{name}.json"), .regex("^https://"), .header("A"), .body(Data()),
      .jsonBody(["a": 1]), .get("/a").query(["b": nil]), RequestMatcher("x") { _ in true },
    ]
    for matcher in matchers { #expect(matcher.problems.isEmpty, "\(matcher)") }
  }

  @Test func problemsAreFoundInsideCombinators() {
    let bad = RequestMatcher.get("/a//b")
    #expect((bad && .header("A")).problems.count == 1)
    #expect((RequestMatcher.get("/ok") || bad).problems.count == 1)
    #expect((!bad).problems.count == 1)
    #expect((bad || .regex("(")).problems.count == 2)
  }

  @Test func malformedMatcherInStubIsReportedWhereTheStubIsRegistered() {
    let mock = URLSessionMock()
    let line = #line + 2
    expectReport {
      mock.stub(.get("/users/{login"), with: .status(200))
    } matching: { report in
      let text = report.message
      return text.contains("The stub for GET /users/{login can never match")
        && text.contains("segment 2 ({login) has an unclosed \"{\"")
        && report.line == line
    }
  }

  @Test func malformedMatcherInVerifyIsReportedAndFails() {
    let mock = URLSessionMock(status: 200)
    route(mock, "GET", "https://e.com/a/b")
    expectReport {
      #expect(!mock.verify(.get("/a//b"), called: .never))
    } matching: { report in
      report.message.contains("The matcher GET /a//b can never match")
    }
    expectReport {
      #expect(!mock.verifyInOrder([.get("/a/b"), .regex("[")]))
    } matching: { report in
      report.message.contains("The regular expression /[/ does not compile")
    }
  }

  @Test func anUntypedJSONBodyIsComparedAsJSON() {
    let request = routingRequest(
      "POST", "https://e.com/todos", body: Data(#"{ "done" : false, "title" : "Buy milk" }"#.utf8))
    #expect(
      RequestMatcher.post("/todos").jsonBody(["title": "Buy milk", "done": false])
        .matches(request))
    #expect(!RequestMatcher.jsonBody(["title": "Buy bread", "done": false]).matches(request))
    #expect(RequestMatcher.jsonBody(["title": "Buy milk", "done": false]).problems.isEmpty)
  }

  @Test func anUntypedJSONBodyThatJSONCannotHoldIsAProblem() {
    let matcher = RequestMatcher.jsonBody(["when": Date()] as [String: Any])
    #expect(matcher.problems.first?.contains("cannot be represented as JSON") == true)
    #expect(!matcher.matches(routingRequest("POST", "https://e.com/x", body: Data("{}".utf8))))
  }

  @Test func aMalformedSideMakesNegationsAndAlternativesNeverMatch() {
    let request = routingRequest("GET", "https://e.com/example")
    #expect(!(!RequestMatcher.url("{unclosed")).matches(request))
    #expect(!(RequestMatcher.url("/example") || .regex("(")).matches(request))
    #expect(!(RequestMatcher.url("/example") || .regex("(")).problems.isEmpty)
  }

  @Test func anAbsolutePatternsHostComparesPercentDecoded() {
    #expect(
      RequestMatcher.get("https://ex%41mple.com/x").matches(
        routingRequest("GET", "https://exAmple.com/x")))
  }
}
