import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Mappings that WireMock 2.35.1 loads (or refuses), read as it reads them: every expected value
/// here was measured on the real jar.
@Suite struct WireMockLoadingTests {
  func mock(_ mappings: [String: String]) throws -> URLSessionMock {
    let root = try WireMockFormatTests.root(mappings)
    defer { removeFolder(root) }
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: root))
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    return mock
  }

  @Test func aScalarBodyIsServedAsTheJSONTextItIsWrittenAs() throws {
    let cases: [(String, String)] = [
      ("true", "true"), ("false", "false"), ("42", "42"), ("1.50", "1.50"), ("1e2", "1e2"),
      ("-0.0", "-0.0"), ("null", ""),
    ]
    var mappings: [String: String] = [:]
    for (index, (json, _)) in cases.enumerated() {
      mappings["b\(index).json"] =
        #"{"request": {"url": "/b\#(index)"}, "response": {"status": 200, "body": \#(json)}}"#
    }
    let mock = try mock(mappings)
    for (index, (json, served)) in cases.enumerated() {
      let answer = route(mock, "GET", "http://h.test/b\(index)")
      #expect(answer.status == 200, "\(json)")
      #expect(answer.text == served, "\(json)")
    }
  }

  @Test(arguments: [#"{"a": 1}"#, "[1, 2]"])
  func anObjectOrArrayBodyIsRefusedAsWireMockRefusesIt(_ json: String) throws {
    let root = try WireMockFormatTests.root([
      "o.json": #"{"request": {"url": "/o"}, "response": {"body": \#(json)}}"#
    ])
    defer { removeFolder(root) }
    let error = bundleError { _ = try MockBundle(contentsOf: root) }
    #expect(error?.path == "response.body")
    #expect(error?.description.contains("jsonBody") == true)
  }

  @Test func theLegacyBasicAuthFieldIsReadAsBasicAuthCredentials() throws {
    let mock = try mock([
      "a.json": #"""
      {"request": {"url": "/auth", "basicAuth": {"username": "u", "password": "p"}},
       "response": {"body": "authed"}}
      """#
    ])
    // "u:p" and "u:x" in base64.
    let good = route(mock, "GET", "http://h.test/auth", headers: ["Authorization": "Basic dTpw"])
    #expect(good.text == "authed")
    let bad = route(mock, "GET", "http://h.test/auth", headers: ["Authorization": "Basic dTp4"])
    #expect(bad.status == 404)
    #expect(route(mock, "GET", "http://h.test/auth").status == 404)
  }

  @Test func aFilterOnTheRootTestsTheRootItselfOrEachElementOfARootArray() throws {
    let mock = try mock([
      "f.json": #"""
      {"request": {"method": "POST", "url": "/jp",
                   "bodyPatterns": [{"matchesJsonPath": "$.[?(@.name=='A')]"}]},
       "response": {"body": "jp"}}
      """#
    ])
    let cases: [(String, Int)] = [
      (#"[{"name":"A"}]"#, 200), (#"{"x":{"name":"A"}}"#, 404), (#"{"name":"A"}"#, 200),
      (#"[{"name":"B"}]"#, 404), (#"[{"name":"B"},{"name":"A"}]"#, 200),
    ]
    for (body, status) in cases {
      let answer = route(mock, "POST", "http://h.test/jp", body: Data(body.utf8))
      #expect(answer.status == status, "\(body)")
    }
  }

  @Test func absentOnAJSONPathMatchesABodyThatIsNotJSONButNotAnEmptyOne() throws {
    let mock = try mock([
      "a.json": #"""
      {"request": {"method": "POST", "url": "/absent",
                   "bodyPatterns": [{"matchesJsonPath": {"expression": "$.items", "absent": true}}]},
       "response": {"body": "absent-ok"}}
      """#
    ])
    let cases: [(String, Int)] = [
      ("not json", 200), (#"{"items":1}"#, 404), (#"{"x":1}"#, 200), ("", 404),
    ]
    for (body, status) in cases {
      let answer = route(mock, "POST", "http://h.test/absent", body: Data(body.utf8))
      #expect(answer.status == status, "\(body)")
    }
  }

  @Test func jsonBodyNumbersAreWrittenAsWireMockWritesThem() throws {
    let mock = try mock([
      "n.json": #"""
      {"request": {"url": "/nums"}, "response": {"jsonBody":
        {"a":1.0,"b":1e2,"c":-0.0,"d":1E-7,"e":1.5,"f":-0,"g":12345678901234567890,
         "h":1.23e20,"i":0.1,"j":100.0e-2,"l":3.14159265358979323846,"m":-1.5e-10,
         "n":2.0E3,"o":[1.0,2.50],"p":-12,"q":0.000,"r":10,"s":1.0e+1}}}
      """#
    ])
    #expect(
      route(mock, "GET", "http://h.test/nums").text
        == #"{"a":1,"b":100,"c":0,"d":0.0000001,"e":1.5,"f":0,"g":12345678901234567890,"#
        + #""h":123000000000000000000,"i":0.1,"j":1,"l":3.14159265358979323846,"#
        + #""m":-0.00000000015,"n":2000,"o":[1,2.5],"p":-12,"q":0,"r":10,"s":10}"#)
  }

  @Test func aTrailingCommaInAMappingFileIsRefusedAsWireMockRefusesIt() throws {
    for text in [
      #"{"request": {"url": "/t"}, "response": {"body": "x"},}"#,
      #"{"request": {"url": "/t", "bodyPatterns": [{"contains": "a"},]}, "response": {}}"#,
      #"{"mappings": [{"request": {"url": "/t"}, "response": {}},]}"#,
    ] {
      let root = try WireMockFormatTests.root(["t.json": text])
      defer { removeFolder(root) }
      let error = bundleError { _ = try MockBundle(contentsOf: root) }
      #expect(error?.source.hasSuffix("mappings/t.json") == true, "\(text)")
      #expect(error?.description.contains("trailing comma") == true, "\(text)")
    }
  }

  @Test func commentsInAMappingFileAreSkippedAsWireMockSkipsThem() throws {
    let mock = try mock([
      "c.json": """
      // a mapping with comments, as WireMock reads it
      {"request": {"url": "/c"}, /* the answer: */ "response": {"body": "commented"}}
      """
    ])
    #expect(route(mock, "GET", "http://h.test/c").text == "commented")
  }

  @Test func ourOwnFormatStillAcceptsATrailingComma() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    let file = try writeFile(
      #"{"version": 1, "entries": [{"request": {"url": "/x"}, "response": {"status": 201}},]}"#,
      "bundle.json", in: folder)
    #expect(try MockBundle(contentsOf: file).count == 1)
  }

  @Test func aWebhookIsNotPerformedButItsMappingLoadsAndAnswersSayingSoOnce() throws {
    let root = try WireMockFormatTests.root([
      "hooks/w.json": #"""
      {"request": {"url": "/wh"}, "response": {"body": "wh"},
       "postServeActions": [{"name": "webhook",
                             "parameters": {"method": "POST", "url": "http://127.0.0.1:1/x"}}]}
      """#
    ])
    defer { removeFolder(root) }
    let bundle = try MockBundle(contentsOf: root)
    let reports = expectReport(
      containing: "mappings/hooks/w.json", "postServeActions", "not performed",
      severity: .warning
    ) {
      let mock = URLSessionMock(bundle: bundle)
      #expect(route(mock, "GET", "http://h.test/wh").text == "wh")
      #expect(route(mock, "GET", "http://h.test/wh").text == "wh")
    }
    #expect(reports.count == 1)
  }
}
