import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The admin API's bounds, over 127.0.0.1: a body over `ServerLimits.maxAdminBodyBytes` is
/// refused before it is read, and mappings and scenarios listed, imported and removed in bulk
/// come out exact.
@Suite(.serialized) struct AdminBoundsTests {
  private static func mapping(body: Int) -> String {
    #"{"request": {"url": "/big"}, "response": {"status": 200, "body": "\#(String(repeating: "x", count: body))"}}"#
  }

  @Test func anAdminBodyOverItsLimitIs413WithWireMocksErrorAndStubBodiesAreNotLimited()
    async throws
  {
    let mock = URLSessionMock()
    mock.stub(.post("/upload"), with: .status(204))
    let server = try mock.startServer(limits: ServerLimits(maxAdminBodyBytes: 1024), admin: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    let answer = try await admin.call("POST", "/__admin/mappings", Self.mapping(body: 2000))
    #expect(answer.status == 413, "\(answer.text)")
    let error = try #require((answer.json?["errors"] as? [[String: Any]])?.first, "\(answer.text)")
    #expect(error["code"] as? Int == 413)
    #expect((error["detail"] as? String)?.contains("maxAdminBodyBytes") == true, "\(answer.text)")
    // Nothing was added, the API answers on, and a body within the limit is read.
    let list = try await admin.call("GET", "/__admin/mappings")
    #expect((list.json?["mappings"] as? [Any])?.isEmpty == true, "\(list.text)")
    #expect(
      try await admin.call("POST", "/__admin/mappings", Self.mapping(body: 500)).status == 201)
    // A stub's request is held to maxBodyBytes only.
    #expect(try await admin.call("POST", "/upload", Self.mapping(body: 2000)).status == 204)
  }

  @Test func scenariosListEachWithItsOwnMappingsAndStates() async throws {
    let mock = URLSessionMock()
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    var mappings: [String] = []
    for index in 0..<300 {
      let scenario = "s\(index % 100)"
      mappings.append(
        #"{"scenarioName": "\#(scenario)", "requiredScenarioState": "Started", "newScenarioState": "step\#(index / 100)", "request": {"url": "/s/\#(index)"}, "response": {"status": 200}}"#
      )
    }
    let body = #"{"mappings": [\#(mappings.joined(separator: ","))]}"#
    #expect(try await admin.call("POST", "/__admin/mappings/import", body).status == 200)
    let listed = try await admin.call("GET", "/__admin/scenarios")
    let scenarios = try #require(listed.json?["scenarios"] as? [[String: Any]], "\(listed.text)")
    #expect(scenarios.count == 100)
    let first = try #require(scenarios.first { $0["name"] as? String == "s7" })
    #expect((first["mappings"] as? [Any])?.count == 3)
    #expect(first["possibleStates"] as? [String] == ["Started", "step0", "step1", "step2"])
    #expect(first["state"] as? String == "Started")
    // Removing them all, in one call, leaves none.
    #expect(try await admin.call("DELETE", "/__admin/mappings").status == 200)
    let after = try await admin.call("GET", "/__admin/mappings")
    #expect((after.json?["mappings"] as? [Any])?.isEmpty == true)
  }
}
