import Foundation
import HTTPSessionMocks
import Testing

@testable import HTTPSessionMocksRuntime

/// Which test framework runs the process, decided from the argument vector, the environment and
/// the main bundle each runner really starts the process with (`TestRunner`), and the run-time
/// link from the test-framework-free runtime to `HTTPSessionMocks`' glue.
@Suite struct TestRunnerTests {
  struct Start: Sendable, CustomTestStringConvertible {
    let runner: String
    let arguments: [String]
    var environment: [String: String] = [:]
    var mainBundlePath = "/"
    let expected: FailureReporter.Framework

    var testDescription: String { runner }
  }

  static let starts: [Start] = [
    // Measured here: `swift test` on Linux runs the test executable once per framework, and
    // passes `--testing-library swift-testing` for the Swift Testing pass (Swift 6.3.1).
    Start(
      runner: "swift test, XCTest, Linux",
      arguments: ["/p/.build/x86_64-unknown-linux-gnu/debug/AppPackageTests.xctest"],
      mainBundlePath: "/p/.build/x86_64-unknown-linux-gnu/debug", expected: .xcTest),
    Start(
      runner: "swift test, Swift Testing, Linux",
      arguments: [
        "/p/.build/x86_64-unknown-linux-gnu/debug/AppPackageTests.xctest", "--testing-library",
        "swift-testing",
      ],
      mainBundlePath: "/p/.build/x86_64-unknown-linux-gnu/debug", expected: .swiftTesting),
    // SwiftPM on macOS runs Swift Testing through swiftpm-testing-helper, whose first
    // arguments are `--test-bundle-path BUNDLE` (swiftpm-testing-helper/Entrypoint.swift).
    Start(
      runner: "swift test, Swift Testing, macOS",
      arguments: [
        "/Applications/Xcode.app/Contents/Developer/usr/libexec/swift/pm/swiftpm-testing-helper",
        "--test-bundle-path",
        "/p/.build/arm64-apple-macosx/debug/AppPackageTests.xctest/Contents/MacOS/AppPackageTests",
        "--testing-library", "swift-testing",
      ],
      mainBundlePath: "/Applications/Xcode.app/Contents/Developer/usr/libexec/swift/pm",
      expected: .swiftTesting),
    Start(
      runner: "swiftpm-testing-helper without a library argument",
      arguments: [
        "/usr/libexec/swift/pm/swiftpm-testing-helper", "--test-bundle-path",
        "/p/.build/debug/AppPackageTests.xctest/Contents/MacOS/AppPackageTests",
      ], expected: .swiftTesting),
    // ... and XCTest through `xctest`, with the bundle as a later argument.
    Start(
      runner: "swift test, XCTest, macOS",
      arguments: [
        "/Applications/Xcode.app/Contents/Developer/usr/bin/xctest", "-XCTest",
        "AppTests.LoginTests/testLogin",
        "/p/.build/arm64-apple-macosx/debug/AppPackageTests.xctest",
      ],
      mainBundlePath: "/Applications/Xcode.app/Contents/Developer/usr/bin", expected: .xcTest),
    // Xcode's test runs (an xctest agent, or the app hosting the tests) carry the test
    // configuration in the environment.
    Start(
      runner: "Xcode, hosted in the app",
      arguments: ["/private/var/containers/Bundle/Application/ID/App.app/App"],
      environment: [
        "XCTestConfigurationFilePath": "/tmp/App-ID.xctestconfiguration",
        "XCTestSessionIdentifier": "ID",
      ],
      mainBundlePath: "/private/var/containers/Bundle/Application/ID/App.app",
      expected: .xcTest),
    Start(
      runner: "Xcode, bundle path only",
      arguments: ["/Applications/Xcode.app/Contents/Developer/usr/bin/xctest"],
      environment: ["XCTestBundlePath": "/p/Build/Products/Debug/AppTests.xctest"],
      expected: .xcTest),
    Start(
      runner: "an app under UI test",
      arguments: ["/private/var/containers/Bundle/Application/ID/App.app/App", "-UITests"],
      environment: ["HTTPSESSIONKIT_STUBS": "{}"],
      mainBundlePath: "/private/var/containers/Bundle/Application/ID/App.app",
      expected: .none),
    Start(
      runner: "stub-server", arguments: ["/usr/local/bin/stub-server", "--port", "8080"],
      mainBundlePath: "/usr/local/bin", expected: .none),
    Start(runner: "no arguments at all", arguments: [], expected: .none),
  ]

  @Test(arguments: starts) func eachRunnerIsRecognised(_ start: Start) {
    let framework = TestRunner.framework(
      arguments: start.arguments, environment: start.environment,
      mainBundlePath: start.mainBundlePath)
    #expect(framework == start.expected)
  }

  @Test func theRuntimeFindsTheGlueOfHTTPSessionMocks() {
    #expect(_mangledTypeName(TestFrameworkGlue.self) == TestFrameworkLink.glueTypeName)
    let hooks = TestFrameworkLink.hooks
    #expect(hooks.map(ObjectIdentifier.init) == ObjectIdentifier(TestFrameworkGlue.self))
    #expect(hooks?.isRunningSwiftTestingTest == true)
  }
}
