import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The admin API's request lists as WireMock 2.35.1 gives them (measured on the jar): unmatched
/// requests newest first, found requests oldest first, every logged request with `loggedDate`
/// and `loggedDateString`, and near misses for a request pattern.
@Suite struct AdminJournalOrderTests {
  func served() throws -> (LoopbackServer, AdminClient) {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    mock.stub(.get("/a"), with: .text("a"))
    let server = try mock.startServer(admin: true)
    return (server, AdminClient(server.baseURL))
  }

  func urls(_ json: [String: Any]?) -> [String?] {
    AdminClient.requests(json).map { $0["url"] as? String }
  }

  @Test func unmatchedRequestsComeNewestFirstAndFoundOnesOldestFirstEachWithItsDate()
    async throws
  {
    let (server, admin) = try served()
    defer { server.stop() }
    for path in ["/un/one", "/a", "/un/two", "/un/three"] { try await admin.call("GET", path) }
    let unmatched = try await admin.call("GET", "/__admin/requests/unmatched")
    #expect(urls(unmatched.json) == ["/un/three", "/un/two", "/un/one"])
    let found = try await admin.call(
      "POST", "/__admin/requests/find", #"{"urlPathPattern": "/un/.*"}"#)
    #expect(urls(found.json) == ["/un/one", "/un/two", "/un/three"])
    for list in [unmatched, found] {
      for request in AdminClient.requests(list.json) {
        let milliseconds = try #require(
          (request["loggedDate"] as? NSNumber)?.int64Value, "\(request)")
        let text = try #require(request["loggedDateString"] as? String)
        // "2026-12-05T12:43:32Z": to the second, in UTC, as WireMock writes it.
        #expect(text.count == 20 && text.hasSuffix("Z"), "\(text)")
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let formatter = ISO8601DateFormatter()
        #expect(formatter.string(from: date) == text)
      }
    }
  }

  @Test func nearMissesOfARequestPatternAreTheClosestLoggedRequests() async throws {
    let (server, admin) = try served()
    defer { server.stop() }
    try await admin.call("GET", "/un/one")
    try await admin.call("POST", "/un/one")
    try await admin.call("GET", "/a")
    try await admin.call("GET", "/far/away?x=1")
    let answer = try await admin.call(
      "POST", "/__admin/near-misses/request-pattern", #"{"method": "GET", "url": "/un/one"}"#)
    #expect(answer.status == 200)
    let misses = try #require(answer.json?["nearMisses"] as? [[String: Any]])
    #expect(misses.count == 3)
    let first = try #require(misses.first)
    #expect((first["request"] as? [String: Any])?["url"] as? String == "/un/one")
    #expect((first["request"] as? [String: Any])?["method"] as? String == "GET")
    #expect((first["request"] as? [String: Any])?["loggedDate"] is NSNumber)
    #expect(((first["matchResult"] as? [String: Any])?["distance"] as? NSNumber)?.doubleValue == 0)
    #expect((first["requestPattern"] as? [String: Any])?["url"] as? String == "/un/one")
    let distances = misses.compactMap {
      (($0["matchResult"] as? [String: Any])?["distance"] as? NSNumber)?.doubleValue
    }
    #expect(distances == distances.sorted() && distances.count == 3 && distances[1] > 0)
    let bad = try await admin.call("POST", "/__admin/near-misses/request-pattern", "nope")
    #expect(bad.status == 422)
  }
}
