import Foundation
import HTTPSessionMocksRuntime
import SampleClient

/// The printed story of a run, and the checks it verified.
///
/// Answers can arrive on any thread (inside `resume()`, inside `VirtualClock.advance`, in the
/// client's own task), so printing and the list of checks are behind one lock.
final class Transcript: @unchecked Sendable {
  // @unchecked Sendable: `checks` and `scenarios` are only touched while `lock` is held.
  private let lock = NSLock()
  private var checks: [(description: String, passed: Bool)] = []
  private var scenarios = 0

  /// Prints a line as it is.
  func line(_ text: String) {
    lock.withLock { print(text) }
  }

  /// Starts a numbered scenario.
  func scenario(_ title: String) {
    let number = lock.withLock {
      scenarios += 1
      return scenarios
    }
    line("\(number). \(title)")
  }

  /// Prints what the client handed back.
  func result(_ text: String) {
    line("     → \(text)")
  }

  /// Records a check; a failing one makes the run fail.
  @discardableResult
  func expect(_ passed: Bool, _ description: String) -> Bool {
    lock.withLock { checks.append((description, passed)) }
    return passed
  }

  /// Runs a double's verification (which explains a failure on standard error, pointing at the
  /// caller's line) and records it.
  @discardableResult
  func verify(
    _ session: some RecordingSession, _ matcher: RequestMatcher, called count: CallCount = .once,
    as description: String? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    let passed = session.verify(
      matcher, called: count, fileID: fileID, filePath: filePath, line: line, column: column)
    return expect(passed, description ?? "\(matcher) called \(count)")
  }

  /// Prints the checks and returns the process's exit status: 0 when every check passed.
  func summary() -> Int32 {
    let all = lock.withLock { checks }
    line("")
    line("verified:")
    for check in all {
      line("  \(check.passed ? "✓" : "✗ FAILED:") \(check.description)")
    }
    let failed = all.filter { !$0.passed }.count
    line(
      failed == 0
        ? "All \(all.count) checks passed."
        : "\(failed) of \(all.count) checks FAILED (details on standard error).")
    return failed == 0 ? 0 : 1
  }
}

/// How the transcript names a moment of virtual time: `0s`, `2s`, `1.5s`.
func format(_ instant: VirtualClock.Instant) -> String {
  let (seconds, attoseconds) = instant.offset.components
  if attoseconds == 0 { return "\(seconds)s" }
  return "\(Double(seconds) + Double(attoseconds) / 1e18)s"
}

/// How the transcript names an error: `URLError(.timedOut)`.
func format(_ error: any Error) -> String {
  guard let error = error as? URLError else { return "\(error)" }
  switch error.code {
  case .cancelled: return "URLError(.cancelled)"
  case .timedOut: return "URLError(.timedOut)"
  case .notConnectedToInternet: return "URLError(.notConnectedToInternet)"
  default: return "URLError(\(error.code.rawValue))"
  }
}

/// What completion handlers hand back, collected from any thread in arrival order.
final class Collected<Value: Sendable>: @unchecked Sendable {
  // @unchecked Sendable: `values` is only touched while `lock` is held.
  private let lock = NSLock()
  private var values: [Value] = []

  func append(_ value: Value) {
    lock.withLock { values.append(value) }
  }

  var all: [Value] { lock.withLock { values } }
}
