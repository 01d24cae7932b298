import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// WireMock's near-miss JSON (`GET /__admin/requests/unmatched/near-misses` and
/// `POST /__admin/near-misses/request`): our admin API beside the real WireMock 2.35.1, the same
/// mappings added to each through the API, the same unmatched request sent to each.
@Suite(.timeLimit(.minutes(3)))
struct NearMissParityTests {
  /// Four mappings with fixed ids: the first differs from the probe in one header only, the
  /// others in method, path and more.
  static let mappings = [
    #"{"id": "00000000-0000-4000-8000-000000000001", "request": {"method": "GET", "urlPath": "/orders", "headers": {"Accept": {"contains": "json"}}}, "response": {"status": 200, "body": "orders"}}"#,
    #"{"id": "00000000-0000-4000-8000-000000000002", "request": {"method": "POST", "urlPath": "/other"}, "response": {"status": 201}}"#,
    #"{"id": "00000000-0000-4000-8000-000000000003", "request": {"method": "PUT", "urlPath": "/elsewhere/deep", "bodyPatterns": [{"contains": "x"}]}, "response": {"status": 204}}"#,
    #"{"id": "00000000-0000-4000-8000-000000000004", "request": {"method": "DELETE", "urlPath": "/x/y/z", "headers": {"X-Key": {"equalTo": "k"}}}, "response": {"status": 202}}"#,
  ]

  /// What a near-miss list says, for comparing: the mappings' ids in order, and each distance.
  struct Misses {
    var ids: [String] = []
    var distances: [Double] = []
    var urls: [String] = []
  }

  static func misses(_ answer: AdminClient.Answer) throws -> Misses {
    let list = try #require(answer.json?["nearMisses"] as? [[String: Any]], "\(answer.text)")
    var misses = Misses()
    for miss in list {
      misses.ids.append((miss["stubMapping"] as? [String: Any])?["id"] as? String ?? "none")
      misses.distances.append(
        (miss["matchResult"] as? [String: Any])?["distance"] as? Double ?? -1)
      misses.urls.append((miss["request"] as? [String: Any])?["url"] as? String ?? "none")
    }
    return misses
  }

  /// Adds the mappings, sends the probe, and reads both near-miss lists.
  static func run(against base: URL) async throws -> (unmatched: Misses, posted: Misses) {
    let admin = AdminClient(base)
    for mapping in mappings {
      #expect(try await admin.call("POST", "/__admin/mappings", mapping).status == 201)
    }
    var probe = URLRequest(url: base.appendingPathComponent("orders"))
    probe.setValue("text/html", forHTTPHeaderField: "Accept")
    _ = try await liveSession().data(for: probe)
    let unmatched = try misses(
      try await admin.call("GET", "/__admin/requests/unmatched/near-misses"))
    let posted = try misses(
      try await admin.call(
        "POST", "/__admin/near-misses/request",
        #"{"url": "/orders", "method": "GET", "headers": {"Accept": "text/html"}}"#))
    return (unmatched, posted)
  }

  @Test func ourNearMissesHaveWireMocksShape() async throws {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let (unmatched, posted) = try await Self.run(against: server.baseURL)
    for misses in [unmatched, posted] {
      #expect(misses.ids.count == 3)  // the three closest of four
      #expect(misses.ids.first == "00000000-0000-4000-8000-000000000001")
      #expect(misses.urls.allSatisfy { $0 == "/orders" })
      #expect(misses.distances.allSatisfy { (0.0..<1.0).contains($0) }, "\(misses.distances)")
      #expect(misses.distances == misses.distances.sorted())
      #expect(misses.distances[0] > 0)
    }
    #expect(unmatched.distances == posted.distances)
  }

  @Test func aStubMadeInCodeHasNoMappingAndAMatchingStubADistanceOfZero() async throws {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    mock.stub(.get("/a"), with: .text("a"))
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    let posted = try await admin.call(
      "POST", "/__admin/near-misses/request", #"{"url": "/a", "method": "GET"}"#)
    let list = try #require(posted.json?["nearMisses"] as? [[String: Any]])
    #expect(list.count == 1)
    #expect(list.first?["stubMapping"] == nil)
    let result = try #require(list.first?["matchResult"] as? [String: Any])
    #expect(result["distance"] as? Double == 0)
    #expect((result["report"] as? String)?.contains("GET /a") == true)
    let bad = try await admin.call("POST", "/__admin/near-misses/request", #"{"url": "a"}"#)
    #expect(bad.status == 422)
    #expect(mock.requests.isEmpty)  // the posted request was never sent
  }

  @Test(.enabled(if: RealWireMock.isAvailable, "\(RealWireMock.unavailableReason ?? "")"))
  func theRealWireMockListsTheSameNearMisses() async throws {
    let root = try TemporaryFolder("wiremock-near-misses")
    try FileManager.default.createDirectory(
      at: root.url.appendingPathComponent("mappings"), withIntermediateDirectories: true)
    let wireMock = try await RealWireMock.start(rootDirectory: root.url)
    defer { wireMock.stop() }
    let theirs = try await Self.run(against: wireMock.baseURL)

    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let ours = try await Self.run(against: server.baseURL)

    for (mine, real) in [(ours.unmatched, theirs.unmatched), (ours.posted, theirs.posted)] {
      #expect(mine.ids.count == real.ids.count, "ours \(mine.ids), WireMock \(real.ids)")
      #expect(mine.ids.first == real.ids.first)
      #expect(Set(mine.ids).isSubset(of: Set(Self.mappingIDs)))
      #expect(mine.urls == real.urls)
      #expect(real.distances.allSatisfy { (0.0...1.0).contains($0) })
    }
  }

  static let mappingIDs = (1...4).map { "00000000-0000-4000-8000-00000000000\($0)" }
}
