import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

/// WireMock's own Python admin client against our admin API, and against the real WireMock
/// 2.35.1 with the same calls: the answers it reads must be equal.
@Suite struct AdminAPIParityTests {
  /// What the client reads from the real WireMock 2.35.1 (checked against it by
  /// `theRealWireMockAndOursAnswerTheClientAlike`).
  static let expected =
    #"{"afterDeleteAll": 0, "afterReset": 0, "count": 2, "created": ["/hello", 200, "hi"], "#
    + #""deleted": 0, "found": ["/hello", "/hello"], "hello": ["hi", "hi"], "limited": 1, "#
    + #""listed": [["GET", "/nope", 404], ["GET", "/hello", 200], ["GET", "/hello", 200]], "#
    + #""mapping": "/hello", "mappings": 1, "nope": 404, "one": "/nope", "total": 3, "#
    + #""unmatched": ["/nope"], "updated": [201, "changed"]}"#

  /// A mock with no stubs that answers what nothing matches with a plain 404, as WireMock
  /// does, served with the admin API.
  func ours() throws -> (URLSessionMock, LoopbackServer) {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    return (mock, try mock.startServer(admin: true))
  }

  @Test(
    .enabled(
      if: PythonAdminClient.unavailableReason == nil,
      "\(PythonAdminClient.unavailableReason ?? "")"))
  func wireMocksPythonClientDrivesOurAdminAPI() async throws {
    let (mock, server) = try ours()
    defer { server.stop() }
    let base = server.baseURL
    let read = try await PythonAdminClient.offThePool { try PythonAdminClient.run(against: base) }
    #expect(read == Self.expected)
    // The client's admin calls never reached the mock; its requests to the stubs did (the
    // journal was reset after the first four).
    #expect(mock.requests.isEmpty)
  }

  @Test(
    .enabled(
      if: PythonAdminClient.unavailableReason == nil && RealWireMock.isAvailable,
      "\(PythonAdminClient.unavailableReason ?? RealWireMock.unavailableReason ?? "")"))
  func theRealWireMockAndOursAnswerTheClientAlike() async throws {
    let root = try TemporaryFolder("wiremock-root")
    try FileManager.default.createDirectory(
      at: root.appendingPathComponent("mappings", isDirectory: true),
      withIntermediateDirectories: true)
    let folder = root.url
    let theirs = try await PythonAdminClient.offThePool {
      let wireMock = try RealWireMock(rootDirectory: folder)
      defer { wireMock.stop() }
      return try PythonAdminClient.run(against: wireMock.baseURL)
    }
    let (_, server) = try ours()
    defer { server.stop() }
    let base = server.baseURL
    let mine = try await PythonAdminClient.offThePool { try PythonAdminClient.run(against: base) }
    #expect(mine == theirs)
    #expect(theirs == Self.expected)
  }
}
