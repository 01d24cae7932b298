import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The seam the admin API uses: one mapping object in, the mapping back out as WireMock's JSON.
@Suite struct WireMockMappingTests {
  static let source = "POST /__admin/mappings"

  func mapping(_ text: String) throws -> WireMockMapping {
    try WireMockMapping(json: Data(text.utf8), source: Self.source)
  }

  func mock(_ mappings: WireMockMapping...) -> URLSessionMock {
    var bundle = MockBundle()
    for mapping in mappings { bundle.append(mapping.entry) }
    let mock = URLSessionMock(bundle: bundle)
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    return mock
  }

  @Test func readsIdNameAndTheRequestAndResponseFields() throws {
    let read = try mapping(
      """
      {"id": "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7", "name": "user",
       "request": {"method": "GET", "url": "/users/octocat?tab=repos",
                   "headers": {"Accept": {"contains": "json"}}},
       "response": {"status": 203, "jsonBody": {"login": "octocat"},
                    "headers": {"X-Trace": "t1"}}}
      """)
    #expect(read.id == UUID(uuidString: "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7"))
    #expect(read.name == "user")
    let mock = mock(read)
    let hit = route(
      mock, "GET", "https://api.test/users/octocat?tab=repos",
      headers: ["Accept": "application/json"])
    #expect(hit.status == 203)
    #expect(hit.header("X-Trace") == "t1")
    #expect(hit.header("Content-Type") == nil)
    #expect(hit.text == #"{"login":"octocat"}"#)
    #expect(
      route(
        mock, "GET", "https://api.test/users/octocat?tab=repos", headers: ["Accept": "text/html"]
      )
      .status == 404)
    #expect(route(mock, "GET", "https://api.test/users/octocat").status == 404)
  }

  @Test func aMappingWithoutIdGetsOneAndUuidCountsAsId() throws {
    let made = try mapping(#"{"request": {"urlPath": "/a"}, "response": {"status": 200}}"#)
    let other = try mapping(#"{"request": {"urlPath": "/a"}, "response": {"status": 200}}"#)
    #expect(made.id != other.id)
    let given = try mapping(
      #"{"uuid": "00000000-0000-0000-0000-000000000001", "request": {}, "response": {}}"#)
    #expect(given.id == UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
  }

  @Test(arguments: [
    #"8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7\u0000zzz"#, "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7zzz",
    "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7 ", "1-1-1-1-1", "+c5db8b0-2db4-4ad7-a99f-38c9b00da3f7",
  ])
  func anIdIsExactlyAUUID(_ id: String) throws {
    let error = try #require(
      throws: MockBundleError.self,
      performing: { try mapping(#"{"id": "\#(id)", "request": {}, "response": {}}"#) })
    #expect(error.path == "id")
    let upper = try mapping(
      #"{"id": "8C5DB8B0-2DB4-4AD7-A99F-38C9B00DA3F7", "request": {}, "response": {}}"#)
    #expect(upper.id == UUID(uuidString: "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7"))
  }

  @Test func urlPathAndUrlPathPatternMatchThePathOnlyAndWhole() throws {
    let mock = mock(
      try mapping(
        #"{"request": {"method": "GET", "urlPath": "/items"}, "response": {"status": 204}}"#),
      try mapping(
        #"{"request": {"urlPathPattern": "/orders/[0-9]+"}, "response": {"status": 200, "body": "order"}}"#
      ))
    #expect(route(mock, "GET", "http://h.test/items?any=thing").status == 204)
    #expect(route(mock, "GET", "http://h.test/items/").status == 404)
    #expect(route(mock, "HEAD", "http://h.test/items").status == 404)
    #expect(route(mock, "DELETE", "http://h.test/orders/12").text == "order")
    #expect(route(mock, "GET", "http://h.test/orders/12/lines").status == 404)
  }

  @Test func bodyAndBase64BodyAnswerAsGivenWithoutAContentType() throws {
    let mock = mock(
      try mapping(#"{"request": {"urlPath": "/t"}, "response": {"status": 200, "body": "plain"}}"#),
      try mapping(#"{"request": {"urlPath": "/b"}, "response": {"base64Body": "AAEC"}}"#))
    let text = route(mock, "GET", "http://h.test/t")
    #expect(text.text == "plain")
    #expect(text.header("Content-Type") == nil)
    #expect(route(mock, "GET", "http://h.test/b").data == Data([0, 1, 2]))
  }

  @Test func jsonWritesTheMappingBackWithIdAndUuid() throws {
    let read = try mapping(
      """
      {"id": "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7", "name": "n", "priority": 2,
       "request": {"method": "POST", "urlPath": "/a", "headers": {"X": {"equalTo": "1"}}},
       "response": {"status": 201, "body": "made", "headers": {"Location": "/a/1"}}}
      """)
    let json = try #require(
      try JSONSerialization.jsonObject(with: read.json()) as? [String: Any])
    #expect(json["id"] as? String == "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7")
    #expect(json["uuid"] as? String == "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7")
    #expect(json["priority"] as? Int == 2)
    let request = try #require(json["request"] as? [String: Any])
    #expect(request["method"] as? String == "POST")
    #expect(request["urlPath"] as? String == "/a")
    let again = try WireMockMapping(json: read.json(), source: "again")
    #expect(again.id == read.id)
    #expect(again.entry == read.entry)
  }

  @Test func errorsNameTheSourceAndTheJSONPath() throws {
    let error = try #require(
      throws: MockBundleError.self,
      performing: {
        try mapping(#"{"request": {"urlPath": "/x"}, "response": {"status": "ok"}}"#)
      })
    #expect(error.source == Self.source)
    #expect(error.path == "response.status")
    let unknown = try #require(
      throws: MockBundleError.self,
      performing: {
        try mapping(#"{"request": {"urlPath": "/x", "bodyPaterns": []}, "response": {}}"#)
      })
    #expect(unknown.path == "request.bodyPaterns")
    #expect(unknown.problem.contains("unknown field"))
  }

  @Test func aRequestPatternMatchesAsTheRequestOfAMapping() throws {
    let pattern = try RequestMatcher.wireMockPattern(
      json: Data(#"{"method": "GET", "url": "/hello"}"#.utf8), source: "count")
    #expect(pattern.matches(routingRequest("GET", "http://h.test/hello")))
    #expect(!pattern.matches(routingRequest("GET", "http://h.test/hello?x=1")))
    #expect(!pattern.matches(routingRequest("POST", "http://h.test/hello")))
    let any = try RequestMatcher.wireMockPattern(json: Data("{}".utf8), source: "count")
    #expect(any.matches(routingRequest("PATCH", "http://h.test/any")))
  }

  @Test func scenarioStatesWithoutAScenarioNameAreIgnoredAsWireMockIgnoresThem() throws {
    let read = try mapping(
      #"{"requiredScenarioState": "x", "newScenarioState": "y", "request": {"urlPath": "/rs"}, "response": {"status": 200}}"#
    )
    #expect(read.entry.whenState == nil)
    #expect(route(mock(read), "GET", "http://h.test/rs").status == 200)
  }
}
