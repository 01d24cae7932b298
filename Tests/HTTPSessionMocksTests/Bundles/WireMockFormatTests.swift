import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// WireMock root folders, mapping files and `{"mappings": [...]}` files, read and written.
@Suite struct WireMockFormatTests {
  /// A root with `mappings/` (nested) and `__files/` (nested).
  static func root(_ mappings: [String: String], files: [String: String] = [:]) throws -> URL {
    let root = try makeTemporaryFolder()
    for (name, text) in mappings { try writeFile(text, "mappings/" + name, in: root) }
    for (name, text) in files { try writeFile(text, "__files/" + name, in: root) }
    return root
  }

  func mock(_ bundle: MockBundle) -> URLSessionMock {
    let mock = URLSessionMock(bundle: bundle)
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    return mock
  }

  @Test func aRootIsReadRecursivelyWithBodyFilesInSubfolders() throws {
    let root = try Self.root(
      [
        "a.json": #"{"request": {"urlPath": "/a"}, "response": {"bodyFileName": "bodies/a.txt"}}"#,
        "nested/deeper/b.json": #"{"request": {"urlPath": "/b"}, "response": {"status": 202}}"#,
        "list.json": """
        {"mappings": [{"request": {"urlPath": "/c"}, "response": {"status": 203}},
                      {"request": {"urlPath": "/d"}, "response": {"status": 204}}]}
        """,
        "notes.txt": "not a mapping",
      ], files: ["bodies/a.txt": "from a file"])
    defer { removeFolder(root) }
    let bundle = try MockBundle(contentsOf: root)
    #expect(bundle.count == 4)
    let mock = mock(bundle)
    #expect(route(mock, "GET", "http://h.test/a").text == "from a file")
    #expect(route(mock, "GET", "http://h.test/b").status == 202)
    #expect(route(mock, "GET", "http://h.test/d").status == 204)
  }

  @Test func aSingleMappingFileAndAListFileAreRecognised() throws {
    let root = try Self.root(
      [
        "one.json": #"{"request": {"method": "GET", "url": "/one"}, "response": {"body": "1"}}"#,
        "list.json": #"{"mappings": [{"request": {"url": "/two"}, "response": {"body": "2"}}]}"#,
      ])
    defer { removeFolder(root) }
    let one = try MockBundle(contentsOf: root.appendingPathComponent("mappings/one.json"))
    #expect(route(mock(one), "GET", "http://h.test/one").text == "1")
    let list = try MockBundle(contentsOf: root.appendingPathComponent("mappings/list.json"))
    #expect(route(mock(list), "GET", "http://h.test/two").text == "2")
  }

  @Test func aBodyFileOutsideFilesIsRefused() throws {
    let root = try Self.root(
      [
        "x.json":
          #"{"request": {"urlPath": "/x"}, "response": {"bodyFileName": "../mappings/x.json"}}"#
      ])
    defer { removeFolder(root) }
    let error = bundleError { _ = try MockBundle(contentsOf: root) }
    #expect(error?.kind == .fileOutsideBundle)
    #expect(error?.source.hasSuffix("x.json") == true)
    #expect(error?.path == "response.bodyFileName")
  }

  @Test func unsupportedFeaturesAreRefusedByName() throws {
    let cases: [(String, String)] = [
      (#"{"request": {"bodyPatterns": [{"equalToXml": "<a/>"}]}, "response": {}}"#, "equalToXml"),
      (#"{"request": {"bodyPatterns": [{"matchesXPath": "/a"}]}, "response": {}}"#, "matchesXPath"),
      (
        #"{"request": {"bodyPatterns": [{"matchesJsonSchema": "{}"}]}, "response": {}}"#,
        "matchesJsonSchema"
      ),
      (#"{"request": {"multipartPatterns": []}, "response": {}}"#, "multipartPatterns"),
      (#"{"request": {"customMatcher": {"name": "x"}}, "response": {}}"#, "customMatcher"),
    ]
    for (text, name) in cases {
      let error = bundleError {
        _ = try WireMockMapping(json: Data(text.utf8), source: "m.json")
      }
      #expect(error?.description.contains(name) == true, "\(name): \(String(describing: error))")
      #expect(error?.kind == .unsupported, "\(name)")
    }
  }

  @Test func unknownFieldsAreRefusedNamingTheFileAndTheField() throws {
    let root = try Self.root(
      [
        "sub/typo.json":
          #"{"request": {"urlPath": "/x"}, "response": {"status": 200, "bodyy": "x"}}"#
      ])
    defer { removeFolder(root) }
    let error = bundleError { _ = try MockBundle(contentsOf: root) }
    #expect(error?.source.hasSuffix("mappings/sub/typo.json") == true)
    #expect(error?.path == "response.bodyy")
  }

  @Test func everyRequestFieldMatchesAsWireMockMeasuredIt() throws {
    let root = try Self.root([
      "q.json":
        #"{"request": {"urlPath": "/q", "queryParameters": {"a": {"equalTo": "1"}, "gone": {"absent": true}}}, "response": {"body": "q"}}"#,
      "c.json":
        #"{"request": {"urlPath": "/c", "cookies": {"s": {"equalTo": "1"}}}, "response": {"body": "c"}}"#,
      "ba.json":
        #"{"request": {"urlPath": "/ba", "basicAuthCredentials": {"username": "u", "password": "p"}}, "response": {"body": "ba"}}"#,
      "ci.json":
        #"{"request": {"urlPath": "/ci", "headers": {"X": {"equalTo": "AbC", "caseInsensitive": true}}}, "response": {"body": "ci"}}"#,
      "up.json": #"{"request": {"urlPattern": "/up\\?a=.*"}, "response": {"body": "up"}}"#,
      "t.json":
        #"{"request": {"urlPathTemplate": "/t/{id}", "pathParameters": {"id": {"matches": "[0-9]+"}}}, "response": {"body": "t"}}"#,
      "ej.json":
        #"{"request": {"urlPath": "/ej", "bodyPatterns": [{"equalToJson": {"a": [1, 2]}, "ignoreArrayOrder": true}]}, "response": {"body": "ej"}}"#,
      "jp.json":
        #"{"request": {"urlPath": "/jp", "bodyPatterns": [{"matchesJsonPath": {"expression": "$.items[*].sku", "equalTo": "A1"}}]}, "response": {"body": "jp"}}"#,
    ])
    defer { removeFolder(root) }
    let mock = mock(try MockBundle(contentsOf: root))
    #expect(route(mock, "GET", "http://h.test/q?a=2&a=1").text == "q")
    #expect(route(mock, "GET", "http://h.test/q?A=1").status == 404)
    #expect(route(mock, "GET", "http://h.test/q?a=1&gone=x").status == 404)
    #expect(route(mock, "GET", "http://h.test/c", headers: ["Cookie": "a=2; s=1"]).text == "c")
    #expect(
      route(mock, "GET", "http://h.test/ba", headers: ["Authorization": "basic dTpw"]).text == "ba")
    #expect(
      route(mock, "GET", "http://h.test/ba", headers: ["Authorization": "Basic dTpx"]).status == 404
    )
    #expect(route(mock, "GET", "http://h.test/ci", headers: ["X": "abc"]).text == "ci")
    #expect(route(mock, "GET", "http://h.test/up?a=1").text == "up")
    #expect(route(mock, "GET", "http://h.test/up").status == 404)
    #expect(route(mock, "GET", "http://h.test/t/12").text == "t")
    #expect(route(mock, "GET", "http://h.test/t/ab").status == 404)
    #expect(
      route(mock, "POST", "http://h.test/ej", body: Data(#"{"a": [2.0, 1]}"#.utf8)).text == "ej")
    #expect(
      route(mock, "POST", "http://h.test/ej", body: Data(#"{"a": [2, 1, 3]}"#.utf8)).status == 404)
    #expect(
      route(
        mock, "POST", "http://h.test/jp",
        body: Data(#"{"items": [{"sku": "B"}, {"sku": "A1"}]}"#.utf8)
      )
      .text == "jp")
  }

  @Test func aNearMissNamesThePatternThatDiffered() throws {
    let mapping = try WireMockMapping(
      json: Data(
        #"{"request": {"method": "GET", "urlPath": "/orders", "headers": {"Accept": {"contains": "json"}}}, "response": {}}"#
          .utf8), source: "orders.json")
    var bundle = MockBundle()
    bundle.append(mapping.entry)
    let mock = URLSessionMock(bundle: bundle)
    expectReport {
      route(mock, "GET", "https://e.com/orders", headers: ["Accept": "text/html"])
    } matching: { report in
      report.message.contains(#"header Accept: expected contains "json", got "text/html""#)
        && report.message.contains("orders.json")
    }
  }

  // MARK: - Writing

  @Test func writtenMappingsLoadBackAndAnswerAlike() throws {
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .json(["login": "octocat"]))
    bundle.stub(
      .post("/issues").header("Authorization", "Bearer t").body(.matchesJSONPath("$.title")),
      with: .status(201, headers: ["Location": "/issues/1"]).header(
        "Set-Cookie", values: ["a=1", "b=2"]))
    bundle.stub(.get("/flaky"), with: [.status(503), .text("ok")])
    bundle.stub(.get("/once"), with: .text("once"), times: 1)
    bundle.stub(.get("/reset"), with: .fault(.connectionResetByPeer))
    bundle.stub(.get("/slow"), with: .text("slow").delayed(by: .milliseconds(250)))
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try bundle.write(to: folder, format: .wireMock)
    let names = try FileManager.default.contentsOfDirectory(
      atPath: folder.appendingPathComponent("mappings").path
    ).sorted()
    #expect(names.first == "001-get-users-login.json")
    #expect(names.count == 7)  // /flaky is a chain of two
    let mock = mock(try MockBundle(contentsOf: folder))
    #expect(route(mock, "GET", "https://e.com/users/octocat").text == #"{"login":"octocat"}"#)
    let created = route(
      mock, "POST", "https://e.com/issues", headers: ["Authorization": "Bearer t"],
      body: Data(#"{"title": "x"}"#.utf8))
    #expect(created.status == 201)
    #expect(created.header("Set-Cookie") == "a=1, b=2")
    #expect(route(mock, "GET", "https://e.com/flaky").status == 503)
    #expect(route(mock, "GET", "https://e.com/flaky").text == "ok")
    #expect(route(mock, "GET", "https://e.com/flaky").text == "ok")
    #expect(route(mock, "GET", "https://e.com/once").text == "once")
    #expect(route(mock, "GET", "https://e.com/once").status == 404)
    #expect(route(mock, "GET", "https://e.com/reset").urlErrorCode == .networkConnectionLost)
  }

  @Test func aStatusMessageIsTheReasonPhraseBothWays() throws {
    let mapping = try WireMockMapping(
      json: Data(
        #"{"request": {"urlPath": "/s"}, "response": {"status": 503, "statusMessage": "Down for maintenance", "headers": {"Set-Cookie": ["a=1", "b=2"]}}}"#
          .utf8), source: "status.json")
    let expected = StubResponse.status(503).header("Set-Cookie", values: ["a=1", "b=2"])
      .reasonPhrase("Down for maintenance")
    #expect(mapping.entry.responses == [expected])
    var bundle = MockBundle()
    bundle.append(mapping.entry)
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try bundle.write(to: folder, format: .wireMock)
    let written = try FileManager.default.contentsOfDirectory(
      at: folder.appendingPathComponent("mappings"), includingPropertiesForKeys: nil)
    let text = try written.map { String(decoding: try Data(contentsOf: $0), as: UTF8.self) }
    #expect(text.count == 1)
    #expect(text.first?.contains(#""statusMessage": "Down for maintenance""#) == true, "\(text)")
    #expect(try MockBundle(contentsOf: folder).entries.first?.responses == [expected])
    let error = bundleError {
      _ = try WireMockMapping(
        json: Data(
          #"{"request": {"urlPath": "/s"}, "response": {"statusMessage": "OK\r\nX: 1"}}"#.utf8),
        source: "split.json")
    }
    #expect(error?.description.contains("split.json") == true, "\(String(describing: error))")
    #expect(error?.description.contains("response.statusMessage") == true)
    #expect(error?.problem.contains("U+000D") == true)
  }

  @Test func aStubWireMockCannotExpressIsNamedInTheError() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    var closure = MockBundle()
    expectReport {
      closure.stub(RequestMatcher("is special") { _ in true }, with: .status(200))
    }
    var error = bundleError { try closure.write(to: folder, format: .wireMock) }
    #expect(error?.kind == .unstorable)
    #expect(error?.problem.contains("is special") == true)

    var timeout = MockBundle()
    timeout.stub(.get("/t"), with: .error(URLError(.timedOut)))
    error = bundleError { try timeout.write(to: folder, format: .wireMock) }
    #expect(error?.problem.contains("not one of WireMock's faults") == true)

    var chained = MockBundle()
    chained.stub(.get("/c"), with: .status(200), times: 2, whenState: "in")
    error = bundleError { try chained.write(to: folder, format: .wireMock) }
    #expect(error?.problem.contains("times(2)") == true)

    var either = MockBundle()
    either.stub(.get("/a") || .get("/b"), with: .status(200))
    error = bundleError { try either.write(to: folder, format: .wireMock) }
    #expect(error?.path == "entries[0].request")
  }

  // MARK: - Proxies

  @Test func proxyBaseUrlIsReadAndWrittenBack() throws {
    let root = try Self.root([
      "p.json": """
      {"request": {"urlPathPattern": "/api/.*"}, "response": {"proxyBaseUrl": "http://127.0.0.1:9/base",
       "additionalProxyRequestHeaders": {"X-Added": "1"}, "removeProxyRequestHeaders": ["X-Secret"]}}
      """
    ])
    defer { removeFolder(root) }
    let bundle = try MockBundle(contentsOf: root)
    let response = try #require(bundle.entries.first?.responses.first)
    #expect(
      response
        == .proxy(
          to: URL(string: "http://127.0.0.1:9/base")!, addingHeaders: ["X-Added": "1"],
          removingHeaders: ["X-Secret"]))
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try bundle.write(to: folder, format: .wireMock)
    let again = try MockBundle(contentsOf: folder)
    #expect(again.entries.first?.responses.first == response)
    let written = try FileManager.default.contentsOfDirectory(
      atPath: folder.appendingPathComponent("mappings").path)
    let text = try String(
      contentsOf: folder.appendingPathComponent("mappings/" + written[0]), encoding: .utf8)
    #expect(text.contains(#""proxyBaseUrl""#))
    #expect(text.contains(#""removeProxyRequestHeaders""#))
  }

  @Test func aProxyMappingThatAlsoShapesItsAnswerIsRefusedNamingTheMember() throws {
    let cases: [(String, String, MockBundleError.Kind)] = [
      (#"{"proxyBaseUrl": "http://h.test", "body": "x"}"#, "response.body", .malformed),
      (#"{"proxyBaseUrl": "http://h.test", "status": 200}"#, "response.status", .malformed),
      (
        #"{"proxyBaseUrl": "http://h.test", "fixedDelayMilliseconds": 5}"#,
        "response.fixedDelayMilliseconds", .unsupported
      ),
      (
        #"{"proxyBaseUrl": "http://h.test", "chunkedDribbleDelay": {"numberOfChunks": 2, "totalDuration": 4}}"#,
        "response.chunkedDribbleDelay", .unsupported
      ),
      (#"{"proxyBaseUrl": "ftp://h.test"}"#, "response.proxyBaseUrl", .malformed),
      (#"{"proxyBaseUrl": "http://h.test?a=1"}"#, "response.proxyBaseUrl", .malformed),
      (
        #"{"additionalProxyRequestHeaders": {"A": "1"}}"#, "response.additionalProxyRequestHeaders",
        .malformed
      ),
      (
        #"{"proxyBaseUrl": "http://h.test", "removeProxyRequestHeaders": "A"}"#,
        "response.removeProxyRequestHeaders", .malformed
      ),
    ]
    for (response, path, kind) in cases {
      let text = #"{"request": {"urlPath": "/p"}, "response": "# + response + "}"
      let error = bundleError {
        _ = try WireMockMapping(json: Data(text.utf8), source: "p.json")
      }
      #expect(error?.path == path, "\(response): \(String(describing: error))")
      #expect(error?.kind == kind, "\(response)")
    }
  }

  /// Every header this package sends for a mapping (the proxy's added request headers, the
  /// response's headers) is refused at load when its name is not a token or its value holds
  /// CR, LF or NUL, which would end the line and start another header, or another request.
  @Test(arguments: [
    (
      #""proxyBaseUrl": "http://h.test", "additionalProxyRequestHeaders": {"X-A": "a\r\nX-Injected: 1"}"#,
      "response.additionalProxyRequestHeaders.X-A", "carriage return (U+000D)"
    ),
    (
      #""proxyBaseUrl": "http://h.test", "additionalProxyRequestHeaders": {"X-A": "a\n\nGET /smuggled HTTP/1.1"}"#,
      "response.additionalProxyRequestHeaders.X-A", "line feed (U+000A)"
    ),
    (
      #""proxyBaseUrl": "http://h.test", "additionalProxyRequestHeaders": {"X-A": "a\u0000"}"#,
      "response.additionalProxyRequestHeaders.X-A", "NUL (U+0000)"
    ),
    (
      #""proxyBaseUrl": "http://h.test", "additionalProxyRequestHeaders": {"X-A\r\nX-B": "b"}"#,
      #"response.additionalProxyRequestHeaders["X-A\r\nX-B"]"#, "not a header name"
    ),
    (
      #""proxyBaseUrl": "http://h.test", "additionalProxyRequestHeaders": {"": "b"}"#,
      #"response.additionalProxyRequestHeaders[""]"#, "not a header name"
    ),
    (
      #""status": 200, "headers": {"X-B": "b\r\nSet-Cookie: x=1"}"#, "response.headers.X-B",
      "carriage return (U+000D)"
    ),
    (
      #""status": 200, "headers": {"X-B": ["ok", "c\nd"]}"#, "response.headers.X-B[1]",
      "line feed (U+000A)"
    ),
    (#""status": 200, "headers": {"X B": "b"}"#, #"response.headers["X B"]"#, "not a header name"),
  ])
  func headersThatWouldSplitAMessageAreRefusedAtLoad(
    _ response: String, _ path: String, _ problem: String
  ) throws {
    let text = #"{"request": {"urlPath": "/p"}, "response": {"# + response + "}}"
    let error = bundleError { _ = try WireMockMapping(json: Data(text.utf8), source: "p.json") }
    #expect(error?.path == path, "\(String(describing: error))")
    #expect(error?.problem.contains(problem) == true, "\(String(describing: error))")
    #expect(error?.kind == .malformed)
  }

  @Test func aHeaderThatWouldSplitARequestIsNamedInAListFile() throws {
    let good = #"{"request": {"urlPath": "/ok"}, "response": {"status": 200}}"#
    let bad =
      #"{"request": {"urlPath": "/p"}, "response": {"proxyBaseUrl": "http://h.test", "additionalProxyRequestHeaders": {"X-A": "a\r\nX-Injected: 1"}}}"#
    let root = try Self.root([
      "list.json": #"{"mappings": [\#(good), \#(good), \#(good), \#(bad)]}"#
    ])
    defer { removeFolder(root) }
    let error = bundleError { _ = try MockBundle(contentsOf: root) }
    #expect(
      error?.path == "mappings[3].response.additionalProxyRequestHeaders.X-A",
      "\(String(describing: error))")
    #expect(error?.source.hasSuffix("list.json") == true)
  }

  @Test func aProxyThroughASessionOfTheTestCannotBeWritten() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    // Our own format cannot say a proxy: `stub` reports it, as it does what a file cannot hold.
    var bundle = MockBundle()
    expectReport(containing: "write(to:format: .wireMock)") {
      bundle.stub(
        .get("/p"), with: .proxy(to: URL(string: "https://up.test")!, through: URLSessionMock()))
    }
    var error = bundleError { try bundle.write(to: folder, format: .wireMock) }
    #expect(error?.kind == .unstorable)
    #expect(error?.problem.contains("through a session of the test") == true)
    var ours = MockBundle()
    expectReport(containing: "it is proxied") {
      ours.stub(.get("/p"), with: .proxy(to: URL(string: "https://up.test")!))
    }
    error = bundleError { try ours.write(to: folder) }
    #expect(error?.kind == .unstorable)
    #expect(error?.problem.contains("write(to:format: .wireMock)") == true)
  }
}
