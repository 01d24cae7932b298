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
}
