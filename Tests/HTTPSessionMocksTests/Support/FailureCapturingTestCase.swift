#if canImport(XCTest)
  import Foundation
  import XCTest

  /// An `XCTestCase` that can run code which is expected to fail the test, and look at the
  /// failures instead of failing.
  ///
  /// swift-corelibs-xctest has neither `XCTExpectFailure` nor `XCTIssue`, so on Linux this
  /// intercepts `recordFailure(withDescription:inFile:atLine:expected:)`; on Apple platforms it
  /// intercepts `record(_:)`. Failures outside ``capturingFailures(_:)`` are recorded as usual.
  class FailureCapturingTestCase: XCTestCase {
    /// A failure the test case was asked to record.
    struct CapturedFailure {
      var description: String
      var filePath: String
      var line: Int
    }

    private let lock = NSLock()
    private var captured: [CapturedFailure]?

    /// Runs `body`, and returns the failures it recorded instead of failing the test.
    func capturingFailures(_ body: () throws -> Void) rethrows -> [CapturedFailure] {
      startCapturing()
      defer { _ = stopCapturing() }
      try body()
      return stopCapturing()
    }

    /// Runs `body`, and returns the failures it recorded instead of failing the test.
    func capturingFailures(_ body: () async throws -> Void) async rethrows -> [CapturedFailure] {
      startCapturing()
      defer { _ = stopCapturing() }
      try await body()
      return stopCapturing()
    }

    private func startCapturing() {
      lock.withLock { captured = [] }
    }

    private func stopCapturing() -> [CapturedFailure] {
      lock.withLock {
        defer { captured = nil }
        return captured ?? []
      }
    }

    /// Keeps the failure if a capture is running; returns whether it did.
    private func capture(_ failure: CapturedFailure) -> Bool {
      lock.withLock {
        guard captured != nil else { return false }
        captured?.append(failure)
        return true
      }
    }

    #if canImport(ObjectiveC)
      override func record(_ issue: XCTIssue) {
        let location = issue.sourceCodeContext.location
        let failure = CapturedFailure(
          description: issue.compactDescription, filePath: location?.fileURL.path ?? "",
          line: location?.lineNumber ?? 0)
        if !capture(failure) { super.record(issue) }
      }
    #else
      override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
        expected: Bool
      ) {
        let failure = CapturedFailure(
          description: description, filePath: filePath, line: lineNumber)
        if !capture(failure) {
          super.recordFailure(
            withDescription: description, inFile: filePath, atLine: lineNumber,
            expected: expected)
        }
      }
    #endif
  }
#endif
