import Foundation

#if canImport(Testing)
  import Testing
#endif
#if canImport(XCTest)
  import XCTest
#endif

/// Reports a double's failures to whichever test framework is running.
///
/// Swift Testing gets `Issue.record` when a test is current; XCTest gets `XCTFail`; anything
/// else goes to standard error. The framework that was running when the double was created is
/// remembered, so that a failure found on another thread (a delayed delivery, a timer) still
/// reaches the right framework. Only this file and `MockVerificationTrait.swift` (the Swift
/// Testing trait) import a test framework.
struct FailureReporter: Sendable {
  enum Framework: Sendable {
    case swiftTesting
    case xcTest
    case none
  }

  /// The framework that was running where this reporter was made.
  let framework: Framework

  init() {
    framework = Self.currentFramework() ?? Self.processFramework
  }

  /// Reports `message` as a failure at `site`.
  func fail(_ message: String, at site: CallSite) {
    switch Self.currentFramework() ?? framework {
    case .swiftTesting:
      #if canImport(Testing)
        Issue.record(
          Comment(rawValue: message),
          sourceLocation: SourceLocation(
            fileID: site.fileID, filePath: site.filePath, line: site.line, column: site.column))
      #endif
    case .xcTest:
      #if canImport(XCTest)
        if let file = site.staticFilePath {
          XCTFail(message, file: file, line: UInt(site.line))
        } else {
          XCTFail("\(site): \(message)")
        }
      #endif
    case .none:
      FileHandle.standardError.write(Data("\(site): error: \(message)\n".utf8))
    }
  }

  /// Reports `message` as a warning at `site`: a Swift Testing issue of warning severity (where
  /// the toolchain has them), standard error otherwise. It never fails the test.
  func warn(_ message: String, at site: CallSite) {
    #if canImport(Testing) && compiler(>=6.2)
      if (Self.currentFramework() ?? framework) == .swiftTesting {
        Issue.record(
          Comment(rawValue: message), severity: .warning,
          sourceLocation: SourceLocation(
            fileID: site.fileID, filePath: site.filePath, line: site.line, column: site.column))
        return
      }
    #endif
    FileHandle.standardError.write(Data("\(site): warning: \(message)\n".utf8))
  }

  /// The framework of the current Swift task, if it can tell.
  private static func currentFramework() -> Framework? {
    #if canImport(Testing)
      if Test.current != nil { return .swiftTesting }
    #endif
    return nil
  }

  /// Whether this process is a test runner at all (the XCTest bundle runs both frameworks).
  private static var processFramework: Framework {
    #if canImport(XCTest)
      let environment = ProcessInfo.processInfo.environment
      if environment["XCTestConfigurationFilePath"] != nil
        || environment["XCTestBundlePath"] != nil
        || (CommandLine.arguments.first ?? "").hasSuffix(".xctest")
        || Bundle.main.bundlePath.hasSuffix(".xctest")
      {
        return .xcTest
      }
    #endif
    return .none
  }
}
