import Foundation

// The stall watchdog: real time, never part of the clock's ordering. It ends the work of a test
// that waits on the clock while nothing advances it, and says why.
extension VirtualClock {
  /// A watchdog timer to start: its generation, and the real time it first checks at.
  struct Arming {
    var generation: UInt64
    var checkAt: Duration
  }

  /// The stall watchdog's fields. It never touches the queue's order; it only reads the
  /// queue, and on a stall empties it.
  struct Watchdog {
    /// Real time (see `StallWatchdog.TimeSource`) of the last progress: an `advance` or `run`
    /// ending, or the queue going from empty to non-empty.
    var lastProgress: Duration = .zero
    /// Calls of `advance` or `run` under way; while there are any, nothing is stalled.
    var advancing = 0
    /// Whether a timer task is running (at most one per clock).
    var armed = false
    /// Counts timers started, so that a finished timer's handle is never stored.
    var generation: UInt64 = 0
    var timer: Task<Void, Never>?
    /// How many times the watchdog has ended stalled work.
    var firings = 0
  }

  /// What the watchdog found when its timer woke.
  enum WatchdogCheck {
    case idle
    /// `confirming` when the limit has passed and the next check ends the work unless
    /// something advances the clock meanwhile.
    case checkAgain(at: Duration, confirming: Bool)
    case stalled([Entry], StallWatchdog.Snapshot)
  }

  /// Whether a watchdog timer is running for this clock.
  package var isWatchdogArmed: Bool {
    state.withLock { $0.watchdog.armed }
  }

  /// How many times the watchdog has found the clock stalled and ended its waiting work.
  package var watchdogFirings: Int {
    state.withLock { $0.watchdog.firings }
  }

  /// Inserts `entry`; when it makes an empty queue busy, that counts as progress, and if no
  /// timer is running, returns the one to start (after leaving the lock).
  func enqueue(_ entry: Entry, in state: inout State) -> Arming? {
    let wasIdle = state.queue.isEmpty
    state.insert(entry)
    guard wasIdle, let stallTimeout else { return nil }
    let now = realTime.now()
    state.watchdog.lastProgress = now
    guard !state.watchdog.armed else { return nil }
    state.watchdog.armed = true
    state.watchdog.generation += 1
    return Arming(generation: state.watchdog.generation, checkAt: now + stallTimeout)
  }

  func beginProgress() {
    guard stallTimeout != nil else { return }
    state.withLock { $0.watchdog.advancing += 1 }
  }

  func endProgress() {
    guard stallTimeout != nil else { return }
    let now = realTime.now()
    state.withLock { state in
      state.watchdog.advancing -= 1
      state.watchdog.lastProgress = now
    }
  }

  /// Starts the clock's one timer task. It holds the clock weakly, sleeps in real time until
  /// the next moment a stall could be due, and ends when the queue is empty or the clock is gone.
  ///
  /// It is an unstructured `Task`, so it inherits the task-locals of the code that made the
  /// queue busy (under Swift Testing, the current test).
  func startWatchdog(_ arming: Arming) {
    let realTime = realTime
    let timer = Task { [weak self] in
      var checkAt = arming.checkAt
      var confirming = false
      while true {
        do { try await realTime.sleep(checkAt) } catch { return }
        guard let clock = self else { return }
        let now = realTime.now()
        switch clock.checkForStall(at: now, lateBy: now - checkAt, confirming: confirming) {
        case .idle:
          return
        case .checkAgain(let next, let confirm):
          checkAt = next
          confirming = confirm
        case .stalled(let entries, let snapshot):
          clock.end(entries, snapshot)
          return
        }
      }
    }
    state.withLock { state in
      // A timer that has already found the queue empty has disarmed itself: keep no handle.
      if state.watchdog.armed && state.watchdog.generation == arming.generation {
        state.watchdog.timer = timer
      }
    }
  }

  /// Decides, at real time `now`, whether the waiting work is stalled.
  ///
  /// The limit passing is not enough: the timer first waits a short grace (a fifth of the
  /// limit, at most 1 s) and ends the work only if nothing advanced the clock meanwhile and
  /// that second wake-up came on time. A timer that wakes late was starved of CPU, and so may
  /// the test have been (parallel tests on a loaded machine); then the test gets another grace.
  func checkForStall(at now: Duration, lateBy late: Duration, confirming: Bool)
    -> WatchdogCheck
  {
    guard let stallTimeout else { return .idle }
    let grace = min(stallTimeout / 5, .seconds(1))
    return state.withLock { state -> WatchdogCheck in
      guard !state.queue.isEmpty else {
        state.watchdog.armed = false
        state.watchdog.timer = nil
        return .idle
      }
      // An advance under way, or a test waiting for sleepers, is progress about to happen.
      if state.watchdog.advancing > 0 || !state.sleeperWaiters.isEmpty {
        return .checkAgain(at: now + stallTimeout, confirming: false)
      }
      let due = state.watchdog.lastProgress + stallTimeout
      guard now >= due else { return .checkAgain(at: due, confirming: false) }
      guard confirming, late <= grace else { return .checkAgain(at: now + grace, confirming: true) }
      let entries = state.queue.removeAll()
      state.watchdog.firings += 1
      state.watchdog.armed = false
      state.watchdog.timer = nil
      var snapshot = StallWatchdog.Snapshot(
        now: state.now, sleepDeadlines: [], deliveryDeadlines: [], timeout: stallTimeout)
      for entry in entries {
        switch entry.work {
        case .sleeper: snapshot.sleepDeadlines.append(entry.deadline)
        case .action: snapshot.deliveryDeadlines.append(entry.deadline)
        }
      }
      return .stalled(entries, snapshot)
    }
  }

  /// Ends stalled work, outside the lock. The report is made once: by the earliest sleeper from
  /// its own task (which carries the test's context), or, when only deliveries were waiting,
  /// here with the reporter captured when the clock was created.
  func end(_ entries: [Entry], _ snapshot: StallWatchdog.Snapshot) {
    var report: String? = StallWatchdog.report(snapshot)
    if snapshot.sleepDeadlines.isEmpty, let message = report {
      reporter.fail(message, at: site)
    }
    for entry in entries {
      if case .sleeper(let sleeper) = entry.work {
        sleeper.continuation.resume(throwing: StallWatchdog.Stalled(report: report))
        report = nil
      }
    }
    for entry in entries {
      if case .action(let action) = entry.work { action(true) }
    }
  }
}
