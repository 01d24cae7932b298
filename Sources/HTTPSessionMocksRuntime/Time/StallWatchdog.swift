/// The pieces of `VirtualClock`'s stall watchdog that are not ordering logic: the real-time
/// source it measures with, the marker that wakes a stuck sleeper, and the report it makes.
///
/// The clock keeps the watchdog's few fields in its own `State` (one lock) and runs one timer
/// task per clock while something is waiting; see `VirtualClock.startWatchdog`.
enum StallWatchdog {
  /// Real time as the watchdog sees it: offsets from the moment the clock was created.
  ///
  /// `ContinuousClock` in use; tests inject another clock (a second `VirtualClock`) so that they
  /// can move the watchdog's time deterministically.
  struct TimeSource: Sendable {
    /// The real time elapsed since the source was made.
    let now: @Sendable () -> Duration
    /// Suspends until `now()` reaches the offset; throws when the task is cancelled.
    let sleep: @Sendable (Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
      let origin = clock.now
      now = { origin.duration(to: clock.now) }
      sleep = { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil)
      }
    }
  }

  /// Resumes a stuck sleeper: `sleep(until:)` reports `report` (when set) from the sleeper's own
  /// task, which carries the test's context, and then throws `CancellationError`.
  struct Stalled: Error {
    let report: String?
  }

  /// What was waiting when the watchdog fired, read in one critical region.
  struct Snapshot {
    var now: VirtualClock.Instant
    var sleepDeadlines: [VirtualClock.Instant]
    var deliveryDeadlines: [VirtualClock.Instant]
    var timeout: Duration
  }

  /// The failure message: what is waiting, the likely cause, and the fix.
  static func report(_ snapshot: Snapshot) -> String {
    let sleeps = snapshot.sleepDeadlines.count
    let deliveries = snapshot.deliveryDeadlines.count
    var waiting: [String] = []
    if sleeps > 0 {
      waiting.append(
        "\(counted(sleeps, "sleep")) (due at \(listed(snapshot.sleepDeadlines)))")
    }
    if deliveries > 0 {
      waiting.append(
        "\(counted(deliveries, "scheduled mock delivery", plural: "scheduled mock deliveries")) "
          + "(due at \(listed(snapshot.deliveryDeadlines)))")
    }
    var ends: [String] = []
    if sleeps > 0 {
      ends.append((sleeps == 1 ? "the sleep throws" : "the sleeps throw") + " CancellationError")
    }
    if deliveries > 0 {
      ends.append(
        (deliveries == 1 ? "the delivery fails" : "the deliveries fail")
          + " with URLError(.timedOut)")
    }
    let ending = ends.joined(separator: " and ")
    let advice =
      sleeps > 0
      ? "Likely cause: the test called advance(by:) or advance(to:) before the code under test "
        + "had started its sleep, so that advance ran first and nothing will ever reach the "
        + "sleep's deadline. Fix: call `try await clock.waitForSleepers(count: \(sleeps))` before "
        + "`advance`, or call `await clock.run()` to run everything scheduled."
      : "Likely cause: the test advanced the clock before the request was resumed, or not as far "
        + "as the delivery's deadline, and nothing advances it now. Fix: advance after the "
        + "request has started (waitForRequests(count:) on the mock waits for it) and as far as "
        + "the deadline, or call `await clock.run()` to run everything scheduled."
    return
      "The VirtualClock created here has \(waiting.joined(separator: " and ")) waiting, but "
      + "nothing advanced it for \(snapshot.timeout) of real time (virtual time is "
      + "\(snapshot.now)). \(advice) So that the test can finish, \(ending). "
      + "VirtualClock(stallTimeout:) sets this limit; nil turns the check off."
  }

  private static func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    count == 1 ? "1 \(noun)" : "\(count) \(plural ?? noun + "s")"
  }

  /// The first few deadlines, earliest first.
  private static func listed(_ deadlines: [VirtualClock.Instant]) -> String {
    let shown = 5
    let text = deadlines.prefix(shown).map(\.description).joined(separator: ", ")
    return deadlines.count > shown ? "\(text) and \(deadlines.count - shown) more" : text
  }
}
