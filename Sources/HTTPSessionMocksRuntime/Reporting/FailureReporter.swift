import Foundation

/// Reports a double's failures to whichever test framework is running.
///
/// Swift Testing gets `Issue.record` when a test is current; XCTest gets `XCTFail`; anything
/// else goes to standard error. The framework that was running when the double was created is
/// remembered, so that a failure found on another thread (a delayed delivery, a timer) still
/// reaches the right framework. No file of this module imports a test framework: the calls into
/// them are made by `HTTPSessionMocks` (``TestFrameworkHooks``), found at run time, so a process
/// that does not link it (an app, `stub-server`) reports on standard error.
///
/// Inside `withCapturedReports(_:)` (the package's own tests), reports are kept for the test to
/// look at instead: those made on the scope's task, and those of a reporter made inside the scope,
/// from whatever thread, until the scope ends.
struct FailureReporter: Sendable {
  enum Framework: Sendable {
    case swiftTesting
    case xcTest
    case none
  }

  /// The framework that was running where this reporter was made.
  let framework: Framework
  /// The capture scope (the package's own tests only) that was open where this reporter was made.
  private let capture: ReportCapture?
  /// Who speaks on standard error in place of the report's site (`stub-server`), if not the
  /// site (see ``ReportVoice/speaker``).
  private let speaker: String?

  init(speaker: String? = nil) {
    framework = Self.currentFramework() ?? Self.processFramework
    capture = ReportCapture.current
    self.speaker = speaker
  }

  /// Reports `message` as a failure at `site`.
  func fail(_ message: String, at site: CallSite) {
    send(CapturedReport(message: message, severity: .failure, site: site))
  }

  /// Reports `message` as a warning at `site`: a Swift Testing issue of warning severity (where
  /// the toolchain has them), standard error otherwise. It never fails the test.
  func warn(_ message: String, at site: CallSite) {
    send(CapturedReport(message: message, severity: .warning, site: site))
  }

  /// Hands `report` to an open capture scope, or else to the test framework.
  fileprivate func send(_ report: CapturedReport) {
    if let relay = TestContextRelay.diversion {
      // Recorded in the test context the relay captured, where a `withKnownIssue` can see it.
      // The job clears the diversion: a closed relay runs it here, on this thread, where the
      // diversion is still set.
      relay.runAndWait { TestContextRelay.$diversion.withValue(nil) { send(report) } }
      return
    }
    if let current = ReportCapture.current, current.append(report) { return }
    if let capture, capture.append(report) { return }
    let site = CallSite(
      fileID: report.fileID, filePath: report.filePath, line: report.line, column: report.column,
      staticFilePath: report.staticFilePath)
    switch report.severity {
    case .failure: record(failure: report.message, at: site)
    case .warning: record(warning: report.message, at: site)
    }
  }

  private func record(failure message: String, at site: CallSite) {
    let hooks = TestFrameworkLink.hooks
    switch Self.currentFramework() ?? framework {
    case .swiftTesting:
      if hooks?.recordIssue(message, severity: .failure, at: site) == true { return }
    case .xcTest:
      if hooks?.recordXCTestFailure(message, at: site) == true { return }
    case .none:
      break
    }
    FileHandle.standardError.write(Data("\(speaker ?? "\(site)"): error: \(message)\n".utf8))
  }

  private func record(warning message: String, at site: CallSite) {
    if (Self.currentFramework() ?? framework) == .swiftTesting,
      TestFrameworkLink.hooks?.recordIssue(message, severity: .warning, at: site) == true
    {
      return
    }
    FileHandle.standardError.write(Data("\(speaker ?? "\(site)"): warning: \(message)\n".utf8))
  }

  /// The framework of the current Swift task, if it can tell.
  private static func currentFramework() -> Framework? {
    TestFrameworkLink.hooks?.isRunningSwiftTestingTest == true ? .swiftTesting : nil
  }

  /// The framework that runs this process (``TestRunner``), where a test links the frameworks.
  private static let processFramework: Framework =
    TestFrameworkLink.hooks == nil
    ? .none
    : TestRunner.framework(
      arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment,
      mainBundlePath: Bundle.main.bundlePath)
}

// MARK: - Capturing reports (this package's own tests)

/// A failure or warning that a double made inside `withCapturedReports(_:)`, kept instead of
/// being sent to a test framework.
///
/// This is `package` API: the package's own tests use it to look at the reports of failure paths
/// without recording hundreds of real issues; users never see it.
package struct CapturedReport: Sendable, CustomStringConvertible {
  /// Whether the report would have failed the test.
  package enum Severity: Sendable, Equatable {
    case failure
    case warning
  }

  /// The message the double wrote.
  package let message: String
  package let severity: Severity
  /// Where the report points: the line that made the double, or the line that called the API.
  package let fileID: String
  package let filePath: String
  package let line: Int
  package let column: Int
  /// The path as XCTest wants it, kept so that a report can still be sent there.
  fileprivate let staticFilePath: StaticString?

  init(message: String, severity: Severity, site: CallSite) {
    self.message = message
    self.severity = severity
    self.fileID = site.fileID
    self.filePath = site.filePath
    self.line = site.line
    self.column = site.column
    self.staticFilePath = site.staticFilePath
  }

  package var description: String {
    "\(severity == .failure ? "failure" : "warning") at \(fileID):\(line): \(message)"
  }
}

/// The reports made inside one `withCapturedReports(_:)` scope. A reporter made inside the
/// scope keeps it, so a report from another thread (a delayed delivery) still arrives; once the
/// scope has ended, reports go to the test framework again rather than vanish.
final class ReportCapture: Sendable {
  @TaskLocal static var current: ReportCapture?

  private let reports = Locked<[CapturedReport]?>([])

  /// Keeps `report` if the scope is still open; returns whether it did.
  func append(_ report: CapturedReport) -> Bool {
    reports.withLock { reports in
      guard reports != nil else { return false }
      reports?.append(report)
      return true
    }
  }

  /// What the scope has captured so far, without ending it.
  var sofar: [CapturedReport] { reports.withLock { $0 ?? [] } }

  /// Ends the scope and returns what it captured.
  func close() -> [CapturedReport] {
    reports.withLock { reports in
      defer { reports = nil }
      return reports ?? []
    }
  }

  /// Ends the scope of a body that threw: what it captured goes to the test framework (or an
  /// enclosing scope), since nobody can look at it.
  func closeAndForward() {
    let reporter = FailureReporter()
    for report in close() { reporter.send(report) }
  }
}

/// Runs `body` and returns, with its result, every report made by a double created inside it
/// (wherever and whenever the report happens before `body` returns) or made on its task, instead
/// of sending them to a test framework. If `body` throws, the reports go to the test framework.
package func withCapturedReports<R>(
  _ body: () async throws -> R
) async rethrows -> (R, [CapturedReport]) {
  let capture = ReportCapture()
  do {
    let result = try await ReportCapture.$current.withValue(capture) { try await body() }
    return (result, capture.close())
  } catch {
    capture.closeAndForward()
    throw error
  }
}

/// A function that reads, from any thread, what the current task's innermost
/// `withCapturedReports(_:)` scope has captured so far; `nil` outside such a scope.
package func capturedReportsPeek() -> (@Sendable () -> [CapturedReport])? {
  guard let capture = ReportCapture.current else { return nil }
  return { capture.sofar }
}

/// Runs `body` and returns, with its result, every report it caused; the synchronous form of
/// `withCapturedReports(_:)`.
package func withCapturedReports<R>(_ body: () throws -> R) rethrows -> (R, [CapturedReport]) {
  let capture = ReportCapture()
  do {
    let result = try ReportCapture.$current.withValue(capture) { try body() }
    return (result, capture.close())
  } catch {
    capture.closeAndForward()
    throw error
  }
}
