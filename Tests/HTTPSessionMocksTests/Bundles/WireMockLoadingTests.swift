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
}
