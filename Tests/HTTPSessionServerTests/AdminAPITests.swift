import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// WireMock's admin API on the loopback server (`startServer(admin: true)`), over 127.0.0.1.
@Suite struct AdminAPITests {
  /// A mock that answers `GET /a` and `POST /b`, and answers anything else with a plain 404
  /// (no report), served with the admin API.
  func served() throws -> (URLSessionMock, LoopbackServer, AdminClient) {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    mock.stub(.get("/a"), with: .text("a"))
    mock.stub(.post("/b"), with: .text("b", status: 201))
    let server = try mock.startServer(admin: true)
    return (mock, server, AdminClient(server.baseURL))
  }

  @Test func answersReadyAndNamesAnUnknownEndpoint() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    #expect(try await admin.call("GET", "/__admin").status == 200)
    let unknown = try await admin.call("GET", "/__admin/nothing/here")
    #expect(unknown.status == 404)
    let errors = try #require(unknown.json?["errors"] as? [[String: Any]])
    #expect((errors.first?["title"] as? String)?.contains("/__admin/nothing/here") == true)
  }

  @Test func adminRequestsNeverReachTheMockOrItsJournal() async throws {
    let (mock, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    for (method, path) in [
      ("GET", "/__admin"), ("GET", "/__admin/requests"), ("GET", "/__admin/requests/unmatched"),
      ("POST", "/__admin/requests/count"),
    ] {
      #expect(try await admin.call(method, path, method == "POST" ? "{}" : nil).status == 200)
    }
    #expect(mock.requests.map { $0.url?.path } == ["/a"])
    #expect(mock.unmatchedRequests.isEmpty)
  }

  @Test func aPathThatOnlyStartsLikeTheAdminPathGoesToTheMock() async throws {
    let (mock, server, admin) = try served()
    defer { server.stop() }
    #expect(try await admin.call("GET", "/__administrator").status == 404)
    #expect(mock.unmatchedRequests.map { $0.url?.path } == ["/__administrator"])
  }

  @Test func listsRequestsNewestFirstWithTotalLimitAndWireMocksFields() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    try await admin.call("POST", "/b", #"{"x":1}"#)
    try await admin.call("GET", "/missing?q=1")
    let all = try await admin.call("GET", "/__admin/requests")
    #expect(all.status == 200)
    #expect((all.json?["meta"] as? [String: Any])?["total"] as? Int == 3)
    #expect(all.json?["requestJournalDisabled"] as? Bool == false)
    let events = AdminClient.requests(all.json)
    let urls = events.map { ($0["request"] as? [String: Any])?["url"] as? String }
    #expect(urls == ["/missing?q=1", "/b", "/a"])
    #expect(events.map { $0["wasMatched"] as? Bool } == [false, true, true])
    let post = try #require(events[1]["request"] as? [String: Any])
    #expect(post["method"] as? String == "POST")
    #expect(post["body"] as? String == #"{"x":1}"#)
    #expect(post["loggedDate"] is Int)
    #expect((events[1]["response"] as? [String: Any])?["status"] as? Int == 201)
    let query = (events[0]["request"] as? [String: Any])?["queryParams"] as? [String: Any]
    #expect((query?["q"] as? [String: Any])?["values"] as? [String] == ["1"])

    let limited = try await admin.call("GET", "/__admin/requests?limit=1")
    #expect(AdminClient.requests(limited.json).count == 1)
    #expect((limited.json?["meta"] as? [String: Any])?["total"] as? Int == 3)
    #expect(try await admin.call("GET", "/__admin/requests?limit=x").status == 400)
  }

  @Test func sinceKeepsOnlyTheRequestsLoggedAfterIt() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    let first = AdminClient.requests(try await admin.call("GET", "/__admin/requests").json)
    let logged = try #require((first.first?["request"] as? [String: Any])?["loggedDate"] as? Int)
    let before = Date(timeIntervalSince1970: Double(logged - 1) / 1000)
    let after = Date(timeIntervalSince1970: Double(logged + 1) / 1000)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    for (date, count) in [(before, 1), (after, 0)] {
      let since = formatter.string(from: date)
      let answer = try await admin.call("GET", "/__admin/requests?since=\(since)")
      #expect(AdminClient.requests(answer.json).count == count, "since \(since)")
    }
    #expect(try await admin.call("GET", "/__admin/requests?since=yesterday").status == 400)
  }

  @Test func findsOneRequestByItsIDAndAnswers404ForAnyOther() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    let listed = AdminClient.requests(try await admin.call("GET", "/__admin/requests").json)
    let id = try #require(listed.first?["id"] as? String)
    #expect(UUID(uuidString: id) != nil)
    let one = try await admin.call("GET", "/__admin/requests/\(id)")
    #expect(one.status == 200)
    #expect(one.json?["id"] as? String == id)
    #expect(((one.json?["request"] as? [String: Any])?["url"] as? String) == "/a")
    let other = UUID().uuidString
    #expect(try await admin.call("GET", "/__admin/requests/\(other)").status == 404)
    let signed = id.dropLast(12) + "+" + id.suffix(11)
    for wrong in [signed, id + "%00", id + "0"] {
      #expect(try await admin.call("GET", "/__admin/requests/\(wrong)").status == 404, "\(wrong)")
    }
  }

  @Test func countsAndFindsTheRequestsAPatternMatches() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    for _ in 0..<3 { try await admin.call("GET", "/a") }
    try await admin.call("POST", "/b")
    let count = try await admin.call(
      "POST", "/__admin/requests/count", #"{"method": "GET", "url": "/a"}"#)
    #expect(count.json?["count"] as? Int == 3)
    let find = try await admin.call("POST", "/__admin/requests/find", #"{"method": "POST"}"#)
    #expect(AdminClient.requests(find.json).map { $0["url"] as? String } == ["/b"])
    let bad = try await admin.call("POST", "/__admin/requests/count", "not json")
    #expect(bad.status == 422)
    #expect(bad.json?["errors"] is [Any])
  }

  @Test func listsUnmatchedRequestsWithTheMocksNearMissReport() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    try await admin.call("GET", "/aa")
    let unmatched = try await admin.call("GET", "/__admin/requests/unmatched")
    #expect(AdminClient.requests(unmatched.json).map { $0["url"] as? String } == ["/aa"])
    let near = try await admin.call("GET", "/__admin/requests/unmatched/near-misses")
    let misses = try #require(near.json?["nearMisses"] as? [[String: Any]])
    // One entry for each stub (at most three), closest first, as WireMock lists them.
    #expect(misses.count == 2)
    #expect(misses.allSatisfy { ($0["request"] as? [String: Any])?["url"] as? String == "/aa" })
    let report = (misses.first?["matchResult"] as? [String: Any])?["report"] as? String
    #expect(report?.contains("GET /a") == true, "\(report ?? "no report")")
  }

  @Test(arguments: [("DELETE", "/__admin/requests"), ("POST", "/__admin/requests/reset")])
  func emptiesTheJournal(method: String, path: String) async throws {
    let (mock, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    try await admin.call("GET", "/nope")
    #expect(try await admin.call(method, path).status == 200)
    #expect(mock.requests.isEmpty)
    #expect(mock.unmatchedRequests.isEmpty)
    #expect(AdminClient.requests(try await admin.call("GET", "/__admin/requests").json).isEmpty)
    try await admin.call("GET", "/a")
    #expect(mock.requests.count == 1)
  }

  @Test func resetEmptiesTheJournalAndRestartsTheScenario() async throws {
    let (mock, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    mock.scenarioState = "moved on"
    #expect(try await admin.call("POST", "/__admin/reset").status == 200)
    #expect(mock.requests.isEmpty)
    #expect(mock.scenarioState == URLSessionMock.initialScenarioState)
  }

  // MARK: - Waiting

  @Test func waitAnswersOnceTheRequestsArrive() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    let waiting = Task {
      try await admin.call(
        "POST", "/__admin/requests/wait",
        #"{"pattern": {"method": "GET", "url": "/a"}, "count": 2, "timeoutMs": 20000}"#)
    }
    // Another connection is served while the wait is pending; then the two requests arrive.
    #expect(try await admin.call("GET", "/__admin").status == 200)
    try await admin.call("POST", "/b")
    try await admin.call("GET", "/a")
    try await admin.call("GET", "/a")
    let answer = try await waiting.value
    #expect(answer.status == 200)
    #expect(answer.json?["count"] as? Int == 2)
  }

  @Test func waitAnswersAtOnceWhenEnoughRequestsArrivedBefore() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    let answer = try await admin.call(
      "POST", "/__admin/requests/wait", #"{"pattern": {"url": "/a"}, "timeoutMs": 0}"#)
    #expect(answer.status == 200)
    #expect(AdminClient.requests(answer.json).count == 1)
  }

  @Test func waitAnswers408WhenTooFewRequestsArriveInTime() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/a")
    // No time at all: decided on what the journal holds.
    let now = try await admin.call(
      "POST", "/__admin/requests/wait", #"{"pattern": {"url": "/a"}, "count": 2, "timeoutMs": 0}"#)
    #expect(now.status == 408)
    // A short time in which only a request that does not match arrives.
    let waiting = Task {
      try await admin.call(
        "POST", "/__admin/requests/wait",
        #"{"pattern": {"url": "/a"}, "count": 2, "timeoutMs": 200}"#)
    }
    try await admin.call("POST", "/b")
    let later = try await waiting.value
    #expect(later.status == 408)
    let title = (later.json?["errors"] as? [[String: Any]])?.first?["title"] as? String
    #expect(title?.contains("but 1 arrived") == true, "\(title ?? "no title")")
  }

  @Test func waitRefusesABodyItCannotRead() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    #expect(try await admin.call("POST", "/__admin/requests/wait", "[]").status == 422)
    let negative = try await admin.call(
      "POST", "/__admin/requests/wait", #"{"pattern": {}, "count": -1}"#)
    #expect(negative.status == 422)
  }

  // MARK: - Mappings

  static let hello =
    #"{"request": {"method": "GET", "url": "/hello"}, "response": {"status": 200, "body": "hi"}}"#

  @Test func createsAMappingThatAnswersAndListsReadsAndRemovesIt() async throws {
    let (mock, server, admin) = try served()
    defer { server.stop() }
    let created = try await admin.call("POST", "/__admin/mappings", Self.hello)
    #expect(created.status == 201)
    let id = try #require(created.json?["id"] as? String)
    #expect(created.json?["uuid"] as? String == id)
    #expect(try await admin.call("GET", "/hello").text == "hi")
    let list = try await admin.call("GET", "/__admin/mappings")
    #expect((list.json?["meta"] as? [String: Any])?["total"] as? Int == 1)
    let one = try await admin.call("GET", "/__admin/mappings/\(id)")
    #expect(((one.json?["request"] as? [String: Any])?["url"] as? String) == "/hello")
    #expect(try await admin.call("DELETE", "/__admin/mappings/\(id)").status == 200)
    #expect(try await admin.call("GET", "/hello").status == 404)
    #expect(try await admin.call("GET", "/__admin/mappings/\(id)").status == 404)
    #expect(try await admin.call("DELETE", "/__admin/mappings/\(id)").status == 404)
    // The stubs registered in code are not mappings, and stay.
    #expect(try await admin.call("GET", "/a").text == "a")
    #expect(mock.requests.count == 3)
  }

  @Test func aMappingTheFormatRefusesAnswers422NamingTheField() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    let answer = try await admin.call(
      "POST", "/__admin/mappings",
      #"{"request": {"method": "GET", "urll": "/x"}, "response": {"status": 200}}"#)
    #expect(answer.status == 422)
    let error = try #require((answer.json?["errors"] as? [[String: Any]])?.first)
    #expect((error["source"] as? [String: Any])?["pointer"] as? String == "/request/urll")
    #expect((error["detail"] as? String)?.contains("urll") == true, "\(error)")
    #expect(try await admin.call("POST", "/__admin/mappings", "{").status == 422)
    #expect(
      (try await admin.call("GET", "/__admin/mappings").json?["mappings"] as? [Any])?.isEmpty
        == true)
  }

  @Test func putReplacesAMappingInPlaceAndAnswers404ForAnUnknownOne() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    let created = try await admin.call("POST", "/__admin/mappings", Self.hello)
    let id = try #require(created.json?["id"] as? String)
    let changed =
      #"{"request": {"method": "GET", "url": "/hello"}, "response": {"status": 202, "body": "changed"}}"#
    let put = try await admin.call("PUT", "/__admin/mappings/\(id)", changed)
    #expect(put.status == 200)
    #expect(put.json?["id"] as? String == id)
    let answer = try await admin.call("GET", "/hello")
    #expect(answer.status == 202)
    #expect(answer.text == "changed")
    #expect(try await admin.call("PUT", "/__admin/mappings/\(UUID())", changed).status == 404)
    #expect(
      (try await admin.call("GET", "/__admin/mappings").json?["mappings"] as? [Any])?.count == 1)
  }

  @Test func deleteAllImportAndRemoveByMetadata() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    let id = UUID().uuidString.lowercased()
    let imported = try await admin.call(
      "POST", "/__admin/mappings/import",
      #"{"mappings": [{"id": "\#(id)", "request": {"url": "/one"}, "response": {"status": 200}, "metadata": {"tag": "keep"}}, {"request": {"url": "/two"}, "response": {"status": 200}, "metadata": {"tag": "drop"}}]}"#
    )
    #expect(imported.status == 200)
    #expect(try await admin.call("GET", "/two").status == 200)
    let removed = try await admin.call(
      "POST", "/__admin/mappings/remove-by-metadata",
      #"{"matchesJsonPath": {"expression": "$.tag", "equalTo": "drop"}}"#)
    #expect(removed.status == 200)
    let left = try await admin.call("GET", "/__admin/mappings")
    #expect((left.json?["mappings"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
    #expect(try await admin.call("GET", "/two").status == 404)
    #expect(try await admin.call("DELETE", "/__admin/mappings").status == 200)
    #expect(try await admin.call("GET", "/one").status == 404)
    #expect(
      (try await admin.call("GET", "/__admin/mappings").json?["meta"] as? [String: Any])?["total"]
        as? Int == 0)
  }

  @Test func resetRemovesTheMappingsAddedThroughTheAPI() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    try await admin.call("POST", "/__admin/mappings", Self.hello)
    #expect(try await admin.call("POST", "/__admin/mappings/reset").status == 200)
    #expect(try await admin.call("GET", "/hello").status == 404)
    try await admin.call("POST", "/__admin/mappings", Self.hello)
    #expect(try await admin.call("POST", "/__admin/reset").status == 200)
    #expect(try await admin.call("GET", "/hello").status == 404)
    #expect(try await admin.call("GET", "/a").text == "a")
  }

  @Test func aMappingIDIsExactlyTheUUID() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    let created = try await admin.call("POST", "/__admin/mappings", Self.hello)
    let id = try #require(created.json?["id"] as? String)
    // Each of these once named the mapping: the id's parser skipped what followed the UUID.
    for suffix in ["%00zzz", "%00", "zzz", "%20", "0"] {
      for method in ["GET", "PUT", "DELETE"] {
        let answer = try await admin.call(
          method, "/__admin/mappings/\(id)\(suffix)", method == "PUT" ? Self.hello : nil)
        #expect(answer.status == 404, "\(method) \(id)\(suffix): \(answer.text)")
      }
    }
    #expect(try await admin.call("GET", "/hello").text == "hi")
    // Any case, as WireMock reads a UUID.
    #expect(try await admin.call("GET", "/__admin/mappings/\(id.uppercased())").status == 200)
    #expect(try await admin.call("DELETE", "/__admin/mappings/\(id.uppercased())").status == 200)
    #expect(try await admin.call("GET", "/hello").status == 404)
  }

  @Test func saveWritesEveryMappingOrNoneAndCutsLongNames() async throws {
    let folder = try TemporaryFolder("admin-save")
    let mock = URLSessionMock()
    let server = try mock.startServer(
      admin: AdminSettings(rootDirectory: folder.url), observer: nil)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    let long = String(repeating: "n", count: 300)
    for name in ["short", long] {
      let mapping =
        #"{"name": "\#(name)", "request": {"url": "/\#(name.prefix(5))"}, "response": {"status": 200}}"#
      #expect(try await admin.call("POST", "/__admin/mappings", mapping).status == 201)
    }
    let saved = try await admin.call("POST", "/__admin/mappings/save")
    #expect(saved.status == 200, "\(saved.text)")
    let names = try FileManager.default.contentsOfDirectory(
      atPath: folder.appendingPathComponent("mappings").path)
    #expect(names.count == 2, "\(names)")
    #expect(names.contains { $0.hasPrefix("short-") })
    let cut = try #require(names.first { $0.hasPrefix("nnn") })
    // WireMock 2.35.1 cuts a name to 200 characters: name-id.json is 242 bytes.
    #expect(cut.utf8.count == 242)
    #expect(cut.hasPrefix(String(repeating: "n", count: 200) + "-"))
  }

  @Test func saveWithoutARootFolderAnswers422() async throws {
    let (_, server, admin) = try served()
    defer { server.stop() }
    #expect(try await admin.call("POST", "/__admin/mappings/save").status == 422)
  }

  // MARK: - Scenarios

  @Test func listsSetsAndResetsNamedScenarios() async throws {
    let (mock, server, admin) = try served()
    defer { server.stop() }
    try await admin.call(
      "POST", "/__admin/mappings",
      #"{"scenarioName": "cart", "requiredScenarioState": "Started", "newScenarioState": "full", "request": {"url": "/add"}, "response": {"status": 200}}"#
    )
    let listed = try await admin.call("GET", "/__admin/scenarios")
    let cart = try #require((listed.json?["scenarios"] as? [[String: Any]])?.first)
    #expect(cart["name"] as? String == "cart")
    #expect(cart["state"] as? String == "Started")
    #expect(cart["possibleStates"] as? [String] == ["Started", "full"])
    #expect(try await admin.call("GET", "/add").status == 200)
    #expect(mock.scenarioState(of: "cart") == "full")
    #expect(try await admin.call("POST", "/__admin/scenarios/reset").status == 200)
    #expect(mock.scenarioState(of: "cart") == "Started")
    let set = try await admin.call("PUT", "/__admin/scenarios/cart/state", #"{"state": "full"}"#)
    #expect(set.status == 200)
    #expect(mock.scenarioState(of: "cart") == "full")
    #expect(
      try await admin.call("PUT", "/__admin/scenarios/nope/state", #"{"state": "x"}"#).status == 404
    )
    #expect(try await admin.call("PUT", "/__admin/scenarios/cart/state", "{}").status == 422)
  }

  @Test func aScenarioNameIsOnePathSegmentDecoded() async throws {
    let (mock, server, admin) = try served()
    defer { server.stop() }
    try await admin.call(
      "POST", "/__admin/mappings",
      #"{"scenarioName": "a/b c", "requiredScenarioState": "Started", "request": {"url": "/s"}, "response": {"status": 200}}"#
    )
    let set = try await admin.call(
      "PUT", "/__admin/scenarios/a%2Fb%20c/state", #"{"state": "moved"}"#)
    #expect(set.status == 200, "\(set.text)")
    #expect(mock.scenarioState(of: "a/b c") == "moved")
    #expect(
      try await admin.call("PUT", "/__admin/scenarios/a/b%20c/state", #"{"state": "x"}"#).status
        == 404)
  }

  // MARK: - Shutdown

  @Test func shutdownAnswersThenRunsTheHook() async throws {
    let mock = URLSessionMock()
    let stopped = DispatchSemaphore(value: 0)
    let server = try mock.startServer(
      admin: AdminSettings(onShutdown: { stopped.signal() }), observer: nil)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    #expect(try await admin.call("POST", "/__admin/shutdown").status == 200)
    #expect(stopped.wait(timeout: .now() + 10) == .success)
  }

  @Test func withoutTheAdminAPIAdminPathsGoToTheMock() async throws {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    let server = try mock.startServer()
    defer { server.stop() }
    #expect(try await AdminClient(server.baseURL).call("GET", "/__admin").status == 404)
    #expect(mock.unmatchedRequests.map { $0.url?.path } == ["/__admin"])
  }
}
