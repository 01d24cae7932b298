import Dispatch
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How much work matching one request may take: real time, and values a JSONPath may select.
///
/// A regular expression can backtrack for seconds on a short value (`/(a*)*b` on 90 `a`s), and
/// a JSONPath such as `$..*..*` selects more values at each step than the document has. The
/// mock matches such patterns outside its lock, so other requests go on, and under this budget,
/// so that the request whose patterns run too long fails with a report that names the pattern
/// instead of holding its client. A served mock takes these from `ServerLimits`.
package struct MatchLimits: Sendable, Equatable {
  /// The most real time matching one request may take, over every stub it is compared with.
  package var maxDuration: Duration
  /// The most values one JSONPath evaluation may select, at every step together.
  package var maxJSONPathValues: Int

  package init(maxDuration: Duration = .seconds(1), maxJSONPathValues: Int = 100_000) {
    self.maxDuration = maxDuration
    self.maxJSONPathValues = maxJSONPathValues
  }
}

/// What matching one request may still spend, and the pattern that overran it.
///
/// Routing installs one as ``current`` (a task-local value, so it follows the matching code on
/// whatever thread runs it and no other) while it evaluates the stubs; the evaluators of
/// regular expressions and JSONPaths read it. Without one, they run unbounded, as a test's own
/// `ValuePattern.matches(_:)` does.
final class MatchBudget: Sendable {
  /// The budget of the request being matched on this task or thread.
  @TaskLocal static var current: MatchBudget?

  /// Why matching stopped: the pattern, and what it was doing.
  struct Overrun: Sendable, Equatable {
    /// The pattern as the report names it: `regular expression /(a*)*b/`.
    let pattern: String
    /// What it ran past: `was still running after 1 s of real time on a value of 91 bytes`.
    let reason: String
    /// The stub being compared when it overran, as reports name it.
    var stub: String?
  }

  let limits: MatchLimits
  /// Called as a regular expression reports progress: for tests that act while a slow match
  /// runs.
  private let probe: (@Sendable () -> Void)?
  private let deadline: UInt64
  private let overrunState = Locked<Overrun?>(nil)

  init(_ limits: MatchLimits, probe: (@Sendable () -> Void)? = nil) {
    self.limits = limits
    self.probe = probe
    deadline = DispatchTime.now().uptimeNanoseconds &+ limits.maxDuration.budgetNanoseconds
  }

  /// What overran the budget, once something has.
  var overrun: Overrun? { overrunState.withLock { $0 } }

  /// Whether the budget is spent: every pattern evaluated from now on fails at once.
  var isSpent: Bool { overrunState.withLock { $0 != nil } }

  /// Whether the real time has run out (it records nothing).
  var isPastDeadline: Bool { DispatchTime.now().uptimeNanoseconds >= deadline }

  /// Records the first overrun; later ones are consequences of it.
  func overran(_ pattern: String, _ reason: String) {
    overrunState.withLock { state in
      if state == nil { state = Overrun(pattern: pattern, reason: reason) }
    }
  }

  /// Names the stub that was being compared when the budget was spent, if it is not named yet.
  func blame(_ stub: String) {
    overrunState.withLock { state in
      if state != nil, state?.stub == nil { state?.stub = stub }
    }
  }

  /// Runs `body` with this budget as ``current``.
  func run<Result>(_ body: () throws -> Result) rethrows -> Result {
    try Self.$current.withValue(self, operation: body)
  }

  /// The real time limit as reports say it: `1 s`, `250 ms`.
  var durationText: String {
    let milliseconds = limits.maxDuration.budgetNanoseconds / 1_000_000
    return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
  }

  /// The report of a request whose matching overran its budget: the request, the stub, the
  /// pattern and what it did, why that happens and what to do.
  static func report(_ overrun: Overrun?, for request: URLRequest) -> String {
    let pattern = overrun?.pattern ?? "a pattern"
    let stub = overrun?.stub.map { " of the stub \($0)" } ?? ""
    let reason = overrun?.reason ?? "ran past the budget"
    return
      "Matching \(request.summary) stopped: the \(pattern)\(stub) \(reason). The request "
      + "fails, so that one slow pattern holds up no other request. A regular expression with "
      + "nested repetition, such as (a*)*, can backtrack for seconds on a short value, and a "
      + "JSONPath with several `..` selects more values at each step than the document has. "
      + "Write the pattern without nested repetition (a+ instead of (a*)*), or the path with "
      + "fewer wildcards; the limits are ServerLimits.maxMatchDuration and "
      + "ServerLimits.maxJSONPathValues for a served mock.\n"
  }

  // MARK: - Regular expressions

  /// Whether `regex` matches somewhere in `text`, within the current budget: a search still
  /// running at the deadline stops (ICU reports its progress every few thousand steps), records
  /// the overrun naming `source`, and counts as no match.
  static func search(_ regex: NSRegularExpression, in text: String, source: String) -> Bool {
    let range = NSRange(text.startIndex..., in: text)
    guard let budget = current else { return regex.firstMatch(in: text, range: range) != nil }
    if budget.isSpent { return false }
    var found = false
    var overran = false
    regex.enumerateMatches(in: text, options: [.reportProgress], range: range) {
      result, _, stop in
      if result != nil {
        found = true
        stop.pointee = true
        return
      }
      budget.probe?()
      if budget.isPastDeadline {
        overran = true
        stop.pointee = true
      }
    }
    if overran {
      budget.overran(
        "regular expression /\(source)/",
        "was still running after \(budget.durationText) of real time on a value of "
          + "\(text.utf8.count) bytes")
    }
    return found
  }
}

extension Duration {
  /// The duration in nanoseconds, 0 for a negative one and at most a century, so that adding it
  /// to the uptime clock cannot overflow.
  fileprivate var budgetNanoseconds: UInt64 {
    let (seconds, attoseconds) = components
    guard seconds >= 0 else { return 0 }
    let century: Int64 = 100 * 365 * 86_400
    guard seconds < century else { return UInt64(century) * 1_000_000_000 }
    return UInt64(seconds) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000)
  }
}
