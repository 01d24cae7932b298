import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the session core decided for a resumed task, before anything is delivered.
///
/// ``SessionCore/resume(_:)`` runs in two steps. The first decides (`SessionCore+Decide.swift`):
/// it records the request, routes it, resolves the stub's answer and follows its redirect hops,
/// under the core's lock wherever no user code runs, and returns a plan. The second carries the
/// plan out (`SessionCore+CarryOut.swift`): timeouts, the clock and its watchdog, the test's
/// reports, and delivery to the door's sink. (The two most common plans are decided in the
/// critical region that records the request, and carried out in `resume` itself: a ready
/// answer due at once, whose carrying out is the delivery alone, and a forwarding spy's
/// forward.)
///
/// The plans that only slower paths take (a stream, a forward, a report) are `indirect`, so
/// that the plan every delayed answer passes through stays a few words long.
enum Plan {
  /// Answer now (a zero delay) or on the clock after the delay; an answer due after the
  /// request's `timeoutInterval` fails with `URLError(.timedOut)` at that time instead.
  case after(Duration, Answer, Context)
  /// A dribbled body: the head after the delay, then the pieces of the plan at their times
  /// (cut already where the request times out).
  indirect case stream(Answer, DribblePlan, after: Duration, Context)
  /// Another session answers (a forwarding spy, a proxied stub, the pass-through policy).
  indirect case forward(Forward)
  /// The test answers (a manual spy).
  case hold(WeakReference<HeldTasks>)
  /// No stub matched and the policy fails the request: the test hears the near-miss report,
  /// and the request fails with it.
  indirect case unmatched(Unmatched)
  /// The request fails at once with this error; the test hears `report` at `site`, when there
  /// is one (a stub that cannot answer, a loop of forwards). A stub's refusal gives way to a
  /// cancel under way, as any stub's answer does (`yieldsToCancel`); a refused forward is
  /// delivered even then.
  indirect case refuse(
    URLError, report: String?, site: CallSite, Context, yieldsToCancel: Bool)

  /// The request an answer is for (the last redirect hop's), and the stub that answers it
  /// (`nil`: none, or the unmatched-request policy).
  struct Context {
    let request: URLRequest
    let stub: StubTable.Definition?
  }

  /// A task on its way to another session: its receiver (taken from the task: `nil` when a
  /// cancel came first and has delivered) and the request to send.
  struct Forward {
    let receiver: Receiver?
    /// The task's request, which the exchange records.
    let request: URLRequest
    /// What is sent instead (a proxied stub's upstream request), or `nil`.
    let upstream: URLRequest?
    let session: any HTTPSession
    /// `session`'s core, when it is one of our doubles: the forward then makes its task
    /// there directly.
    let core: SessionCore?
    /// The stub whose answer this is (a proxied stub's), or `nil`.
    let stub: StubTable.Definition?
  }

  /// An unmatched request whose near misses the report lists.
  struct Unmatched {
    let request: URLRequest
    /// The stubs as they were when the request was routed.
    let table: StubTable
    let redaction: ReportRedaction
    /// Set when no stub was chosen because matching ran past its budget: the report names the
    /// pattern instead of listing near misses.
    var overrun: MatchBudget.Overrun?
  }
}
