/// Runs a delayed delivery on a double's clock: exactly on a ``VirtualClock`` (an entry in its
/// queue, run by `advance`), and on any other `Clock` by sleeping on it in a task.
///
/// A virtual clock is held weakly: a delivery pending on a clock that the test dropped is
/// released with the clock, since nothing can ever advance it. (The mock itself keeps the clock
/// it was made with; the core, which running tasks keep alive, does not.)
struct Scheduler: Sendable {
  private enum Kind: Sendable {
    case virtual(WeakReference<VirtualClock>)
    case other(any Clock<Duration>)
  }

  private let kind: Kind
  /// Whether the double was made without a clock, so that its delays take real time.
  let runsInRealTimeByDefault: Bool

  init(clock: (any Clock<Duration>)?) {
    runsInRealTimeByDefault = clock == nil
    if let virtual = clock as? VirtualClock {
      kind = .virtual(WeakReference(virtual))
    } else {
      kind = .other(clock ?? ContinuousClock())
    }
  }

  /// Runs `work(false)` after `delay`; returns what undoes it, or `nil` when the clock is a
  /// virtual clock that no longer exists (then `work` never runs). On a virtual clock whose
  /// stall watchdog ends the work (nothing advanced it), `work(true)` runs instead.
  func schedule(
    after delay: Duration, _ work: @escaping @Sendable (_ stalled: Bool) -> Void
  ) -> PendingCancel? {
    switch kind {
    case .virtual(let box):
      guard let clock = box.object else { return nil }
      return .clockEntry(box, id: clock.schedule(after: delay, work))
    case .other(let clock):
      return .timer(
        Task {
          do { try await clock.sleep(for: delay) } catch { return }
          work(false)
        })
    }
  }

  /// A reading of the clock, for telling how long after something an event came.
  enum Moment: Sendable {
    /// A ``VirtualClock``'s time since its zero.
    case virtual(Duration)
    /// Any other clock is read as the continuous clock.
    case real(ContinuousClock.Instant)
  }

  /// The clock's time now.
  func now() -> Moment {
    switch kind {
    case .virtual(let box): return .virtual(box.object?.now.offset ?? .zero)
    case .other: return .real(.now)
    }
  }

  /// The clock's time as a date, for a template's `now`: a ``VirtualClock``'s
  /// ``VirtualClock/startDate`` plus its virtual time, the wall clock on any other clock.
  func date() -> Date {
    switch kind {
    case .virtual(let box):
      guard let clock = box.object else { return Date() }
      let (seconds, attoseconds) = clock.now.offset.components
      return clock.startDate.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
    case .other: return Date()
    }
  }

  /// The time from `start` to `end` (zero when the two come from different kinds of clock).
  static func time(from start: Moment, to end: Moment) -> Duration {
    switch (start, end) {
    case (.virtual(let a), .virtual(let b)): return b - a
    case (.real(let a), .real(let b)): return a.duration(to: b)
    default: return .zero
    }
  }
}
