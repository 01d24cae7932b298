import Foundation
import Testing

/// Every suite of the package runs in one test process, and on Linux `URLSession.shared` keeps
/// the protocol classes registered when it is made. The interception tests install their
/// dispatcher before it is made; a test that made it first, in parallel with them, would make
/// them fail or not, by the order the tests happened to run in (it did, once, under the thread
/// sanitizer). So only the tests of the shared session may use it, and no test may call
/// `invalidateAndCancel()`, which in corelibs makes `URLSession.shared` to check whether it
/// was called on it.
@Suite struct SharedSessionHygieneTests {
  /// The files that may name `URLSession.shared` in code, and why.
  private static let allowed: [String: String] = [
    "SharedSessionTests.swift": "the shared-session scope's own tests, one at a time",
    "SharedSessionIsolationTests.swift": "a scope beside other users of the shared session",
    "FailureReportingXCTests.swift":
      "an XCTest case: the default the tests replace, in XCTest's process, not Swift Testing's",
  ]

  /// The test sources: every `.swift` file under `Tests`, found from this file's path.
  private static func testSources() throws -> [URL] {
    var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while folder.lastPathComponent != "Tests", folder.pathComponents.count > 1 {
      folder.deleteLastPathComponent()
    }
    let enumerator = try #require(FileManager.default.enumerator(atPath: folder.path))
    // The stand-in is built on its own, never run; this file names what it looks for.
    let own = URL(fileURLWithPath: #filePath).lastPathComponent
    return enumerator.compactMap { $0 as? String }
      .filter { $0.hasSuffix(".swift") && !$0.hasPrefix("AppleFoundationStandIn/") }
      .map { folder.appendingPathComponent($0) }
      .filter { $0.lastPathComponent != own }
  }

  /// The lines of `file` that are code and contain `text` (comments are left out).
  private static func codeLines(of file: URL, containing text: String) throws -> [String] {
    try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
      .filter { line in
        let code = line.trimmingCharacters(in: .whitespaces)
        return !code.hasPrefix("//") && code.contains(text)
      }
      .map { "\(file.lastPathComponent): \($0.trimmingCharacters(in: .whitespaces))" }
  }

  @Test func onlyTheSharedSessionTestsUseURLSessionShared() throws {
    let sources = try Self.testSources()
    #expect(sources.count > 50, "the test sources were not found")
    let uses = try sources.filter { Self.allowed[$0.lastPathComponent] == nil }
      .flatMap { try Self.codeLines(of: $0, containing: "URLSession.shared") }
    #expect(uses.isEmpty, "make a session of the test's own: \(uses)")
  }

  @Test func noTestCallsInvalidateAndCancel() throws {
    let calls = try Self.testSources()
      .flatMap { try Self.codeLines(of: $0, containing: "invalidateAndCancel()") }
    #expect(calls.isEmpty, "use finishTasksAndInvalidate() (after cancelling tasks): \(calls)")
  }
}
