import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Admin request bodies the API cannot use, over 127.0.0.1: each is answered `422` with
/// WireMock's error document naming the JSON pointer of the bad value, and the server goes on
/// serving. (Before, a bare value where a mapping or a pattern belongs ended the process.)
/// The cases run one after another: each starts a server, and forty at once would only load a
/// shared machine.
@Suite(.serialized) struct AdminBodyTests {
  struct BadBody: Sendable, CustomStringConvertible {
    let method: String
    let path: String
    let body: String
    /// The pointer the error names; `nil` for text that is not JSON (WireMock names none).
    let pointer: String?

    init(_ method: String, _ path: String, _ body: String, _ pointer: String?) {
      (self.method, self.path, self.body, self.pointer) = (method, path, body, pointer)
    }

    var description: String { "\(method) \(path) \(body)" }
  }

  static let importing = "/__admin/mappings/import"
  static let wait = "/__admin/requests/wait"
  static let mapping = #"{"request": {"url": "/a"}, "response": {"status": 200}}"#
  static let injecting =
    #"{"request": {"url": "/p"}, "response": {"proxyBaseUrl": "http://127.0.0.1:1", "additionalProxyRequestHeaders": {"X-A": "a\r\nX-Injected: 1"}}}"#

  static let badBodies: [BadBody] = [
    // A bare value where a mapping belongs (each of these ended the process).
    BadBody("POST", importing, #"{"mappings": [1]}"#, "/mappings/0"),
    BadBody("POST", importing, #"{"mappings": [null]}"#, "/mappings/0"),
    BadBody("POST", importing, #"{"mappings": ["x"]}"#, "/mappings/0"),
    BadBody("POST", importing, #"{"mappings": [true]}"#, "/mappings/0"),
    BadBody("POST", importing, #"{"mappings": [\#(mapping), 2.5]}"#, "/mappings/1"),
    // A bare value where a request pattern belongs (these too).
    BadBody("POST", wait, #"{"pattern": 1}"#, "/pattern"),
    BadBody("POST", wait, #"{"pattern": "x"}"#, "/pattern"),
    BadBody("POST", wait, #"{"pattern": true}"#, "/pattern"),
    BadBody("POST", wait, #"{"pattern": [], "timeoutMs": 0}"#, "/pattern"),
    // Wrong shapes, named where they are.
    BadBody("POST", importing, #"{"mappings": [\#(mapping), []]}"#, "/mappings/1"),
    BadBody(
      "POST", importing, #"{"mappings": [{"request": {"urll": "/x"}, "response": {}}]}"#,
      "/mappings/0/request/urll"),
    BadBody("POST", importing, #"{"mappings": "x"}"#, "/mappings"),
    BadBody("POST", importing, #"{"mappings": [], "importOptions": 1}"#, "/importOptions"),
    BadBody(
      "POST", importing, #"{"mappings": [], "importOptions": {"duplicatePolicy": "X"}}"#,
      "/importOptions/duplicatePolicy"),
    BadBody("POST", importing, "[]", "/"),
    BadBody("POST", importing, "", "/"),
    BadBody("POST", importing, "{", nil),
    BadBody("POST", wait, "1", "/"),
    BadBody("POST", wait, #"{"count": 1e300}"#, "/count"),
    BadBody("POST", wait, #"{"count": "2"}"#, "/count"),
    BadBody("POST", wait, #"{"count": -1}"#, "/count"),
    BadBody("POST", wait, #"{"timeoutMs": 1.5}"#, "/timeoutMs"),
    BadBody("POST", wait, #"{"timeoutMs": 99999999999999999999}"#, "/timeoutMs"),
    BadBody("POST", wait, #"{"pattern": {"urll": "/a"}}"#, "/pattern/urll"),
    BadBody("POST", "/__admin/requests/count", "1", "/"),
    BadBody("POST", "/__admin/requests/find", #"{"url": 1}"#, "/url"),
    BadBody("POST", "/__admin/near-misses/request", "1", "/"),
    BadBody("POST", "/__admin/near-misses/request", #"{"url": 1}"#, "/url"),
    BadBody("POST", "/__admin/near-misses/request", #"{"url": "/a", "headers": 1}"#, "/headers"),
    BadBody("POST", "/__admin/mappings", "[]", "/"),
    BadBody("POST", "/__admin/mappings", #"{"request": 1, "response": {}}"#, "/request"),
    BadBody(
      "POST", "/__admin/mappings", #"{"request": {}, "response": {"headers": {"a/b~c": 1}}}"#,
      "/response/headers/a~1b~0c"),
    BadBody("POST", "/__admin/mappings/remove-by-metadata", "1", "/"),
    // Header fields that would end their line and start another (a smuggled header or request).
    BadBody("POST", "/__admin/mappings", injecting, "/response/additionalProxyRequestHeaders/X-A"),
    BadBody(
      "POST", importing, #"{"mappings": [\#(mapping), \#(injecting)]}"#,
      "/mappings/1/response/additionalProxyRequestHeaders/X-A"),
    BadBody(
      "POST", "/__admin/mappings",
      #"{"request": {}, "response": {"headers": {"X-B": "b\nSet-Cookie: x=1"}}}"#,
      "/response/headers/X-B"),
  ]

  @Test(arguments: badBodies)
  func answers422NamingTheBadValueAndGoesOnServing(_ bad: BadBody) async throws {
    let mock = URLSessionMock()
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    let answer = try await admin.call(bad.method, bad.path, bad.body)
    #expect(answer.status == 422, "\(answer.text)")
    let error = try #require((answer.json?["errors"] as? [[String: Any]])?.first, "\(answer.text)")
    #expect(error["code"] as? Int == 10)
    #expect(error["title"] is String)
    let source = error["source"] as? [String: Any]
    #expect(source?["pointer"] as? String == bad.pointer, "\(answer.text)")
    #expect(try await admin.call("GET", "/__admin").status == 200)
    #expect(
      (try await admin.call("GET", "/__admin/mappings").json?["mappings"] as? [Any])?.isEmpty
        == true)
  }

  @Test func aWaitWithANullPatternWaitsForAnyRequest() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("a"))
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    try await admin.call("GET", "/a")
    let answer = try await admin.call("POST", Self.wait, #"{"pattern": null, "timeoutMs": 0}"#)
    #expect(answer.status == 200, "\(answer.text)")
    #expect(answer.json?["count"] as? Int == 1)
  }
}
