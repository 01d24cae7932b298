import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import SampleClient
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `sample-app` plays the app of a UI test, in a process of its own: the tests launch it as
/// XCUIApplication would, with a bundle in its launch environment or with `API_BASE_URL`
/// pointing at a loopback server that a mock in the test answers from.
@Suite struct SampleAppTests {
  static let sampleApp = builtExecutable("sample-app")

  /// Runs `sample-app` to its end; returns its exit status (`nil` if it did not end within
  /// 30 s, or ended by a signal), its standard output and its standard error.
  func runSampleApp(_ arguments: [String], environment: [String: String]) throws -> (
    status: Int32?, output: [String], errors: String
  ) {
    let app = try ChildProcess(
      try #require(Self.sampleApp), arguments,
      environment: cleanEnvironment().merging(environment) { $1 })
    defer { app.stop() }
    let status = app.waitForExit()
    return (status, app.output, app.errorText)
  }

  @Test(
    .enabled(
      if: sampleApp != nil,
      "sample-app was not found beside the test bundle; build it with swift build"))
  func theAppAnswersFromTheBundleInItsLaunchEnvironment() throws {
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .json(User.octocat))
    let environment = try bundle.launchEnvironment()
    #expect(environment[MockBundle.launchEnvironmentFileVariable] == "")

    let run = try runSampleApp(["octocat"], environment: environment)
    #expect(run.status == 0, "\(run.errors)")
    #expect(run.output == ["octocat (id 583231)"])
  }

  @Test(
    .enabled(
      if: sampleApp != nil,
      "sample-app was not found beside the test bundle; build it with swift build"))
  func aLargeBundleTravelsAsAFileAndStillAnswers() throws {
    var bundle = MockBundle()
    let biography = String(repeating: "a long biography ", count: 6_000)
    bundle.stub(
      .get("/users/hubot"),
      with: .json(["login": "hubot", "id": 480_938, "bio": biography]))
    let environment = try bundle.launchEnvironment()
    #expect(environment.values.allSatisfy { $0.utf8.count < 65_536 })
    let path = try #require(environment[MockBundle.launchEnvironmentFileVariable])
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect(FileManager.default.fileExists(atPath: path))

    let run = try runSampleApp(["hubot"], environment: environment)
    #expect(run.status == 0, "\(run.errors)")
    #expect(run.output == ["hubot (id 480938)"])
  }

  @Test(
    .enabled(
      if: sampleApp != nil,
      "sample-app was not found beside the test bundle; build it with swift build"))
  func aMalformedLaunchEnvironmentStopsTheAppWithTheVariablesName() throws {
    let run = try runSampleApp(
      [], environment: [MockBundle.launchEnvironmentVariable: #"{ "version": "one" }"#])
    #expect(run.status == 2)
    #expect(run.output.isEmpty)
    #expect(run.errors.contains("HTTPSESSIONKIT_BUNDLE"), "\(run.errors)")
  }

  @Test(
    .enabled(
      if: sampleApp != nil,
      "sample-app was not found beside the test bundle; build it with swift build"))
  func theAppFetchesFromALoopbackServerAndTheTestVerifiesWhatItSent() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .json(User.hubot))
    let server = try mock.startServer()
    defer { server.stop() }

    let run = try runSampleApp(
      ["hubot"], environment: ["API_BASE_URL": server.baseURL.absoluteString])
    #expect(run.status == 0, "\(run.errors)")
    #expect(run.output == ["hubot (id 480938)"])
    // What the other process sent, as the mock's journal recorded it.
    #expect(
      mock.verify(
        .get("/users/hubot").header("Accept", "application/vnd.github+json"), called: .once))
    #expect(mock.requests.count == 1)
  }

  @Test(
    .enabled(
      if: sampleApp != nil,
      "sample-app was not found beside the test bundle; build it with swift build"))
  func aFailedCallExitsNonZeroWithAClearMessage() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/ghost"), with: .json(["message": "Not Found"], status: 404))
    let server = try mock.startServer()
    defer { server.stop() }

    let run = try runSampleApp(
      ["ghost"], environment: ["API_BASE_URL": server.baseURL.absoluteString])
    #expect(run.status == 1)
    #expect(run.output.isEmpty)
    #expect(run.errors.contains("cannot fetch the user ghost"), "\(run.errors)")
    #expect(run.errors.contains("HTTP 404: Not Found"), "\(run.errors)")
    #expect(mock.verify(.get("/users/ghost"), called: .once))
  }
}
