/// Which test framework runs this process, read from how the process was started.
///
/// A report made where no Swift Testing test is current (a double made outside any test, on a
/// thread of its own) goes to the framework that runs the process. Each runner starts the
/// process its own way:
///
/// | Runner | How the process starts | Framework |
/// | --- | --- | --- |
/// | Xcode (both frameworks) | the environment has `XCTestConfigurationFilePath`, `XCTestSessionIdentifier` or `XCTestBundlePath` | XCTest |
/// | `swift test`, Swift Testing, Linux | the test executable `…PackageTests.xctest` with `--testing-library swift-testing` (measured with Swift 6.3.1) | Swift Testing |
/// | `swift test`, Swift Testing, macOS | SwiftPM's `swiftpm-testing-helper --test-bundle-path …` with `--testing-library swift-testing` (SwiftPM's `swiftpm-testing-helper/Entrypoint.swift`) | Swift Testing |
/// | `swift test`, XCTest, Linux | the test executable `…PackageTests.xctest`, no testing-library argument (measured with Swift 6.3.1) | XCTest |
/// | `swift test`, XCTest, macOS | `xctest [-XCTest filter] …PackageTests.xctest`: the bundle is a later argument | XCTest |
/// | anything else (an app, a preview, `stub-server`) | | none: standard error |
enum TestRunner {
  /// The framework that runs a process started with `arguments` in `environment`, whose main
  /// bundle is at `mainBundlePath`.
  static func framework(
    arguments: [String], environment: [String: String], mainBundlePath: String
  ) -> FailureReporter.Framework {
    let xcodeKeys = ["XCTestConfigurationFilePath", "XCTestSessionIdentifier", "XCTestBundlePath"]
    if xcodeKeys.contains(where: { environment[$0] != nil }) { return .xcTest }
    if let library = arguments.firstIndex(of: "--testing-library"),
      library + 1 < arguments.count
    {
      return arguments[library + 1] == "swift-testing" ? .swiftTesting : .xcTest
    }
    if arguments.dropFirst().first == "--test-bundle-path" { return .swiftTesting }
    let program = arguments.first ?? ""
    let programName = program.split(separator: "/").last.map(String.init) ?? ""
    if isBundlePath(program) || isBundlePath(mainBundlePath) { return .xcTest }
    if programName == "xctest" && arguments.dropFirst().contains(where: isBundlePath) {
      return .xcTest
    }
    return .none
  }

  /// Whether `path` names an XCTest bundle (`….xctest`, with or without a final slash).
  private static func isBundlePath(_ path: String) -> Bool {
    var path = Substring(path)
    while path.hasSuffix("/") { path = path.dropLast() }
    return path.hasSuffix(".xctest")
  }
}
