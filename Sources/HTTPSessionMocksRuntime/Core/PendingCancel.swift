/// What cancels a task's pending delivery: an entry in a ``VirtualClock``'s queue, a timer task
/// sleeping on another clock, or a forwarded task in the session that answers it.
///
/// An enum rather than a closure, so that scheduling a delayed answer allocates no context
/// for its undo: the clock entry's case holds the scheduler's weak box, which every delivery
/// of that double shares.
enum PendingCancel: Sendable {
  /// The entry `id` in the clock's queue; nothing to do once the clock is gone.
  case clockEntry(WeakReference<VirtualClock>, id: UInt64)
  /// A task that sleeps on a clock that is not a ``VirtualClock``, then delivers.
  case timer(Task<Void, Never>)
  /// Anything else, such as cancelling a forwarded task.
  case action(@Sendable () -> Void)

  /// Undoes the pending delivery; does nothing if it has run already.
  func run() {
    switch self {
    case .clockEntry(let clock, let id): clock.object?.cancelScheduled(id)
    case .timer(let task): task.cancel()
    case .action(let action): action()
    }
  }
}
