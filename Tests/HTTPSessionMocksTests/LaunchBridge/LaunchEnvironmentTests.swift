import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The UI-test launch bridge: `MockBundle.launchEnvironment()` on the test side,
/// `URLSessionMock(launchEnvironment:)` on the app side.
@Suite struct LaunchEnvironmentTests {
  let inline = MockBundle.launchEnvironmentVariable
  let file = MockBundle.launchEnvironmentFileVariable

  /// Removes the file a large bundle's environment names, once the test is done with it.
  func removeFile(_ environment: [String: String]) {
    MockBundle.removeLaunchEnvironmentFile(in: environment)
  }

  func body(_ mock: URLSessionMock, _ url: String) async throws -> (Data, Int?) {
    let (data, response) = try await mock.data(from: try #require(URL(string: url)))
    return (data, (response as? HTTPURLResponse)?.statusCode)
  }

  @Test func theVariablesHaveDocumentedNames() {
    #expect(inline == "HTTPSESSIONKIT_BUNDLE")
    #expect(file == "HTTPSESSIONKIT_BUNDLE_FILE")
  }

  @Test func aSmallBundleTravelsInTheVariableAndAnswersOnTheOtherSide() async throws {
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .text("octocat", status: 203))
    let environment = try bundle.launchEnvironment()
    #expect(Set(environment.keys) == [inline, file])
    #expect(environment[file] == "")
    #expect(try #require(environment[inline]).contains("/users/{login}"))

    #expect(try MockBundle(launchEnvironment: environment) == bundle)
    let mock = try #require(try URLSessionMock(launchEnvironment: environment))
    let (data, status) = try await body(mock, "https://api.github.com/users/octocat")
    #expect(status == 203)
    #expect(data == Data("octocat".utf8))
  }

  @Test func aBundleOver64KiBTravelsAsAFileNamedAfterItsContent() async throws {
    var bundle = MockBundle()
    bundle.stub(.get("/large"), with: .text(String(repeating: "x", count: 200_000)))
    let environment = try bundle.launchEnvironment()
    defer { removeFile(environment) }
    #expect(environment.values.allSatisfy { $0.utf8.count < 65_536 })
    #expect(environment[inline] == "")
    let path = try #require(environment[file])
    #expect(path.hasPrefix("/"))
    #expect(FileManager.default.fileExists(atPath: path))
    // The same bundle again reuses the file; another bundle gets its own.
    #expect(try bundle.launchEnvironment()[file] == path)
    var other = bundle
    other.stub(.get("/more"), with: .text(String(repeating: "y", count: 70_000)))
    let otherEnvironment = try other.launchEnvironment()
    defer { removeFile(otherEnvironment) }
    #expect(otherEnvironment[file] != path)

    let mock = try #require(try URLSessionMock(launchEnvironment: environment))
    let (data, status) = try await body(mock, "https://x.test/large")
    #expect(status == 200)
    #expect(data.count == 200_000)
  }

  @Test func theAppLeavesALargeBundlesFileForARelaunchAndTheTestRemovesIt() async throws {
    var bundle = MockBundle()
    bundle.stub(.get("/large"), with: .text(String(repeating: "r", count: 90_000)))
    let environment = try bundle.launchEnvironment()
    defer { removeFile(environment) }
    let path = try #require(environment[file])
    for _ in 1...2 {  // a launch, then a relaunch with the same environment
      let mock = try #require(try URLSessionMock(launchEnvironment: environment))
      #expect(try await body(mock, "https://x.test/large").0.count == 90_000)
      #expect(FileManager.default.fileExists(atPath: path))
    }
    #expect(MockBundle.removeLaunchEnvironmentFile(in: environment))
    #expect(!FileManager.default.fileExists(atPath: path))
    #expect(!MockBundle.removeLaunchEnvironmentFile(in: environment))
  }

  @Test func removingTheLaunchFileNeverTouchesAFileTheBridgeDidNotWrite() throws {
    let folder = FileManager.default.temporaryDirectory
    let others = [
      folder.appendingPathComponent("HTTPSessionKit-bundle-keep-\(UUID().uuidString).json"),
      folder.appendingPathComponent("\(UUID().uuidString).json"),
    ]
    for other in others {
      try Data("{}".utf8).write(to: other)
      defer { try? FileManager.default.removeItem(at: other) }
      #expect(!MockBundle.removeLaunchEnvironmentFile(in: [file: other.path]))
      #expect(FileManager.default.fileExists(atPath: other.path))
    }
    #expect(!MockBundle.removeLaunchEnvironmentFile(in: [file: ""]))
    #expect(!MockBundle.removeLaunchEnvironmentFile(in: [:]))
  }

  @Test func withoutABundleThereIsNoMock() throws {
    #expect(try URLSessionMock(launchEnvironment: [:]) == nil)
    #expect(try URLSessionMock(launchEnvironment: ["PATH": "/usr/bin"]) == nil)
    #expect(try URLSessionMock(launchEnvironment: [inline: "", file: ""]) == nil)
    #expect(try MockBundle(launchEnvironment: ["HOME": "/root"]) == nil)
  }

  @Test func mergingALaterBundleReplacesAnEarlierOne() async throws {
    var large = MockBundle()
    large.stub(.get("/which"), with: .text(String(repeating: "L", count: 100_000)))
    var small = MockBundle()
    small.stub(.get("/which"), with: .text("small"))
    var environment = ["PATH": "/usr/bin"]
    let largeEnvironment = try large.launchEnvironment()
    defer { removeFile(largeEnvironment) }
    environment.merge(largeEnvironment) { $1 }
    environment.merge(try small.launchEnvironment()) { $1 }
    let mock = try #require(try URLSessionMock(launchEnvironment: environment))
    #expect(try await body(mock, "https://x.test/which").0 == Data("small".utf8))

    environment.merge(largeEnvironment) { $1 }
    let again = try #require(try URLSessionMock(launchEnvironment: environment))
    #expect(try await body(again, "https://x.test/which").0.count == 100_000)
  }

  /// The error a launch environment throws, or `nil` (with an issue) when it does not throw.
  func error(for environment: [String: String]) -> MockBundleError? {
    do {
      _ = try URLSessionMock(launchEnvironment: environment)
      Issue.record("no error for \(environment)")
      return nil
    } catch let error as MockBundleError {
      return error
    } catch {
      Issue.record("not a MockBundleError: \(error)")
      return nil
    }
  }

  @Test func aMalformedValueThrowsAnErrorNamingTheVariableAndThePlace() throws {
    let notJSON = try #require(error(for: [inline: "{ this is not json"]))
    #expect(notJSON.source == inline)
    #expect(notJSON.kind == .malformed)
    #expect(notJSON.description.hasPrefix("HTTPSESSIONKIT_BUNDLE:1:3: not valid JSON: "))

    let badStatus = try #require(
      error(for: [
        inline:
          #"{ "version": 1, "entries": [ { "request": { "method": "GET" }, "response": { "status": "abc" } } ] }"#
      ]))
    #expect(badStatus.source == inline)
    #expect(badStatus.path.hasPrefix("entries[0]"), "\(badStatus)")
  }

  @Test func aBadFileVariableThrowsAnErrorNamingTheVariableAndTheFile() throws {
    let missing = "/nonexistent/HTTPSessionKit-\(UUID().uuidString).json"
    let unreadable = try #require(error(for: [file: missing]))
    #expect(unreadable.source == "\(file)=\(missing)")
    #expect(unreadable.kind == .unreadable)

    let relative = try #require(error(for: [file: "bundle.json"]))
    #expect(relative.description.contains("absolute path"))

    let broken = FileManager.default.temporaryDirectory
      .appendingPathComponent("launch-\(UUID().uuidString).json")
    try Data("[1, 2".utf8).write(to: broken)
    defer { try? FileManager.default.removeItem(at: broken) }
    let malformed = try #require(error(for: [file: broken.path]))
    #expect(malformed.source == "\(file)=\(broken.path)")
    #expect(malformed.kind == .malformed)
  }

  @Test func bothVariablesAtOnceAreRefused() throws {
    let both = try #require(error(for: [inline: "{}", file: "/tmp/x.json"]))
    #expect(both.description.contains(inline))
    #expect(both.description.contains(file))
  }

  @Test func aStubThatCannotBeStoredCannotTravel() throws {
    var bundle = MockBundle()
    _ = capturedReports {
      bundle.stub(RequestMatcher("any request") { _ in true }, with: .status(200))
    }
    #expect(throws: MockBundleError.self) { try bundle.launchEnvironment() }
  }

  @Test func anUnmatchedRequestOnTheAppSideIsReportedWhereItsMockWasMade() async throws {
    var bundle = MockBundle()
    bundle.stub(.get("/known"), with: .status(200))
    let environment = try bundle.launchEnvironment()
    let line = #line + 1
    let mock = try #require(try URLSessionMock(launchEnvironment: environment))
    let reports = await expectReport(containing: "No stub matches GET https://x.test/unknown") {
      _ = try? await mock.data(from: try #require(URL(string: "https://x.test/unknown")))
    }
    #expect(reports.first?.line == line)
    #expect(reports.first?.fileID.hasSuffix("LaunchEnvironmentTests.swift") == true)
  }
}
