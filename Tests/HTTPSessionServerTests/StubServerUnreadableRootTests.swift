import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `stub-server` on a WireMock root with a file it cannot read: it names the file, the JSON path
/// and what is wrong, refuses the root by default, and serves the rest with `--skip-unreadable`.
@Suite(
  .enabled(
    if: StubServerCommandTests.stubServer != nil,
    "stub-server was not found beside the test bundle; build it with swift build"))
struct StubServerUnreadableRootTests {
  /// A root with one good mapping and one that uses XML matching, which this package lacks.
  func root() throws -> TemporaryFolder {
    let folder = try TemporaryFolder("stub-server-unreadable")
    let files = [
      "mappings/good.json": #"{"request": {"url": "/good"}, "response": {"body": "good"}}"#,
      "mappings/xml/orders.json":
        #"{"request": {"url": "/xml", "bodyPatterns": [{"equalToXml": "<a/>"}]}, "response": {}}"#,
    ]
    for (name, text) in files {
      let url = folder.url.appendingPathComponent(name)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    return folder
  }

  func start(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(
      try #require(StubServerCommandTests.stubServer), ["--exit-with-parent"] + arguments,
      environment: cleanEnvironment())
  }

  @Test func aRootWithAnUnreadableFileIsRefusedNamingTheFileThePathAndTheWayOut() async throws {
    let folder = try root()
    let server = try start(["--root-dir", folder.url.path, "--port", "0"])
    defer { server.stop() }
    #expect(await server.exit() == 2)
    let errors = server.errorText
    #expect(errors.contains("mappings/xml/orders.json"), "\(errors)")
    #expect(errors.contains("request.bodyPatterns[0].equalToXml"), "\(errors)")
    #expect(errors.contains("--skip-unreadable"), "\(errors)")
  }

  @Test(arguments: [[], ["--no-admin"]])
  func skipUnreadableServesTheRestAndNamesWhatItLeftOut(_ extra: [String]) async throws {
    let folder = try root()
    let server = try start(
      ["--root-dir", folder.url.path, "--port", "0", "--skip-unreadable"] + extra)
    defer { server.stop() }
    let base = try #require(await server.line().flatMap(URL.init(string:)), "\(server.errorText)")
    let (data, response) = try await liveSession().data(from: base.appendingPathComponent("good"))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect(text(data) == "good")
    server.closeInput()
    #expect(await server.exit() == 0)
    let errors = server.errorText
    #expect(errors.contains("warning: skipped"), "\(errors)")
    #expect(errors.contains("mappings/xml/orders.json"), "\(errors)")
    #expect(errors.contains("request.bodyPatterns[0].equalToXml"), "\(errors)")
    #expect(!errors.contains("good.json"), "\(errors)")
  }
}
