import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The reference the WireMock tests compare against starts, answers from its folder and stops
/// without leaving its JVM behind.
@Suite struct RealWireMockTests {
  @Test(
    .enabled(if: RealWireMock.isAvailable, "\(RealWireMock.unavailableReason ?? "")"),
    .timeLimit(.minutes(2)))
  func theReferenceAnswersFromItsFolderAndGoesWhenStopped() async throws {
    let folder = try TemporaryFolder("wiremock")
    let mappings = folder.url.appendingPathComponent("mappings", isDirectory: true)
    try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
    try Data(
      #"{"request": {"method": "GET", "url": "/hello"}, "response": {"status": 200, "body": "hi"}}"#
        .utf8
    ).write(to: mappings.appendingPathComponent("hello.json"))

    let wireMock = try await RealWireMock.start(rootDirectory: folder.url)
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let (data, response) = try await session.data(from: wireMock.url("/hello"))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect(String(decoding: data, as: UTF8.self) == "hi")
    let (_, missing) = try await session.data(from: wireMock.url("/nothing"))
    #expect((missing as? HTTPURLResponse)?.statusCode == 404)

    wireMock.stop()
    await #expect(throws: URLError.self) {
      _ = try await session.data(from: wireMock.url("/hello"))
    }
  }
}
