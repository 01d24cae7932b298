import Foundation

/// A `Clock` whose time moves only when the test says so.
///
/// Time starts at zero and moves only through ``advance(by:)``, ``advance(to:)`` and ``run()``;
/// when `advance` returns, every mock delivery due by then has run, in deadline order. Give it to
/// a ``URLSessionMock`` for delayed answers, and to production code that sleeps on an injected
/// `any Clock<Duration>` (retry back-off, timeouts):
///
/// ```swift
/// let clock = VirtualClock()
/// let mock = URLSessionMock(data: body, response: nil, error: nil, delay: .seconds(30), clock: clock)
/// mock.dataTask(with: url) { data, _, _ in ... }.resume()
/// await clock.advance(by: .seconds(30))  // the handler has run when this returns
/// ```
///
/// > Important: Advance only once the code under test has started its sleep: wait for it with
/// > ``waitForSleepers(count:timeout:fileID:filePath:line:column:)``. A clock that has work
/// > waiting and is not advanced for ``stallTimeout`` of real time fails the test at the line
/// > that created it, naming the fix, and ends what was waiting instead of hanging.
///
/// <doc:VirtualTime> tells the whole story: hand-shakes, retries, timeouts and the watchdog.
public final class VirtualClock: Clock, Sendable {

  /// A point in virtual time: a duration since the clock's zero.
  public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
    /// How far this instant is from the clock's zero.
    public let offset: Duration

    /// Creates the instant `offset` after the clock's zero.
    public init(offset: Duration) {
      self.offset = offset
    }

    /// The instant `duration` later than this one.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The duration from this instant to `other`.
    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }

    /// The offset from zero, such as `30.0 seconds`.
    public var description: String { "\(offset)" }
  }

  /// How a sleep began: cancelled before it could wait, already over, or waiting.
  private enum SleepStart {
    case cancelled
    case elapsed
    case enqueued(wakingWaiters: [CheckedContinuation<Void, any Error>], arming: Arming?)
  }

  struct SleeperWaiter {
    var count: Int
    var continuation: CheckedContinuation<Void, any Error>
  }

  struct State {
    var now = Instant(offset: .zero)
    var nextID: UInt64 = 0
    /// Sorted by deadline, then by insertion (equal deadlines keep their order): the first entry
    /// runs first.
    var queue = EntryQueue()
    /// Sleeps between their start and their entry in the queue, by id: `true` once their task
    /// was cancelled in that gap (then they end at once instead of waiting).
    var startingSleeps: [UInt64: Bool] = [:]
    var sleeperWaiters: [ObjectIdentifier: SleeperWaiter] = [:]
    var watchdog = Watchdog()

    var sleeperCount: Int {
      queue.entries.reduce(0) { count, entry in
        if case .sleeper = entry.work { return count + 1 }
        return count
      }
    }

    mutating func makeID() -> UInt64 {
      nextID += 1
      return nextID
    }

    mutating func insert(_ entry: Entry) {
      queue.insert(entry)
    }

    mutating func remove(id: UInt64) -> Entry? {
      queue.remove(id: id)
    }

    /// Sleeper waiters whose count is now met, removed from the table.
    mutating func satisfiedSleeperWaiters() -> [CheckedContinuation<Void, any Error>] {
      let count = sleeperCount
      let met = sleeperWaiters.filter { $0.value.count <= count }
      for id in met.keys { sleeperWaiters[id] = nil }
      return met.values.map(\.continuation)
    }
  }

  // Internal rather than private: the queue (VirtualClock+Queue.swift) and the stall watchdog
  // (VirtualClock+Watchdog.swift) are extensions in files of their own.
  let state = Locked(State())

  /// How long of real time a sleep or delivery may wait while nothing advances the clock
  /// before the clock reports a stall and ends what is waiting; `nil` when the check is off.
  public let stallTimeout: Duration?
  /// The wall-clock date at the clock's time zero: what a response template's `now` reads,
  /// plus the virtual time that has passed (see ``StubResponse/templated(seed:)``).
  ///
  /// ```swift
  /// let clock = VirtualClock(startDate: ISO8601DateFormatter().date(from: "2026-03-01T09:00:00Z")!)
  /// ```
  ///
  /// 1 January 2000, 00:00 UTC unless the clock is made with another, so that a templated
  /// date is the same on every run.
  public let startDate: Date
  /// 2000-01-01T00:00:00Z, the ``startDate`` of a clock made without one.
  public static let defaultStartDate = Date(timeIntervalSince1970: 946_684_800)
  let site: CallSite
  let reporter: FailureReporter
  let realTime: StallWatchdog.TimeSource

  /// Creates a clock at time zero with nothing scheduled.
  ///
  /// `stallTimeout` is the watchdog's limit: when a sleep or a mock delivery has been waiting on
  /// the clock for that long of real time and nothing has advanced it (no ``advance(by:)``,
  /// ``advance(to:)`` or ``run()``), the clock reports a test failure at the line that created
  /// it, saying what is waiting and how to fix the test, and ends the waiting work: sleeps throw
  /// `CancellationError`, mock deliveries fail with `URLError(.timedOut)`. Time while nothing is
  /// waiting never counts, and before it ends anything the watchdog gives the test a short grace
  /// (a fifth of the limit, at most 1 second) in case it was only starved of CPU. Pass `nil` to
  /// turn the check off.
  ///
  /// ```swift
  /// let clock = VirtualClock()                          // stalls are reported after 5 s
  /// let patient = VirtualClock(stallTimeout: .seconds(60))
  /// let unwatched = VirtualClock(stallTimeout: nil)
  /// ```
  ///
  /// `startDate` is the date response templates read at time zero (``startDate``).
  public convenience init(
    stallTimeout: Duration? = .seconds(5), startDate: Date = VirtualClock.defaultStartDate,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) {
    self.init(
      stallTimeout: stallTimeout, realTime: ContinuousClock(), startDate: startDate,
      fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Creates a clock whose watchdog measures "real time" on `realTime`, so that a test can move
  /// the watchdog's time deterministically (with another `VirtualClock`).
  package init<C: Clock>(
    stallTimeout: Duration?, realTime: C, startDate: Date = VirtualClock.defaultStartDate,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) where C.Duration == Duration {
    self.stallTimeout = stallTimeout.map { max($0, .zero) }
    self.startDate = startDate
    site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    reporter = FailureReporter()
    self.realTime = StallWatchdog.TimeSource(realTime)
  }

  deinit {
    // The timer holds the clock weakly; stop it now rather than when it next wakes.
    state.withLock { $0.watchdog.timer }?.cancel()
  }

  /// The current virtual time.
  public var now: Instant {
    state.withLock { $0.now }
  }

  /// The smallest step this clock distinguishes: any duration, since time is exact.
  public var minimumResolution: Duration { .zero }

  /// How many sleeps and deliveries are waiting for time to reach them.
  public var pendingCount: Int {
    state.withLock { $0.queue.count }
  }

  /// The deadline of the earliest pending sleep or delivery, or `nil` when nothing is waiting.
  public var nextDeadline: Instant? {
    state.withLock { $0.queue.firstDeadline }
  }

  /// Suspends until the clock reaches `deadline`.
  ///
  /// Returns at once if the deadline has passed. Throws `CancellationError` if the calling task
  /// is cancelled before time reaches the deadline.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    let id: UInt64? = state.withLock { state in
      guard state.now < deadline else { return nil }
      let id = state.makeID()
      state.startingSleeps[id] = false
      return id
    }
    guard let id else { return }
    do {
      try await sleep(id: id, until: deadline)
    } catch let stalled as StallWatchdog.Stalled {
      // Reported here, in the sleeper's own task: it carries the test's context.
      if let report = stalled.report { reporter.fail(report, at: site) }
      throw CancellationError()
    }
  }

  private func sleep(id: UInt64, until deadline: Instant) async throws {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let outcome = state.withLock { state -> SleepStart in
          if state.startingSleeps.removeValue(forKey: id) == true { return .cancelled }
          // Time may have reached the deadline since it was checked: then the sleep is over.
          if state.now >= deadline { return .elapsed }
          let arming = enqueue(
            Entry(deadline: deadline, id: id, work: .sleeper(Sleeper(continuation))), in: &state)
          return .enqueued(wakingWaiters: state.satisfiedSleeperWaiters(), arming: arming)
        }
        switch outcome {
        case .cancelled: continuation.resume(throwing: CancellationError())
        case .elapsed: continuation.resume()
        case .enqueued(let waiters, let arming):
          if let arming { startWatchdog(arming) }
          for waiter in waiters { waiter.resume() }
        }
      }
    } onCancel: {
      let entry = state.withLock { state -> Entry? in
        if let entry = state.remove(id: id) { return entry }
        // Not queued yet: mark it, so that it ends when it would have been queued. (A sleep that
        // has already ended is in neither place, and its cancellation changes nothing.)
        if state.startingSleeps[id] != nil { state.startingSleeps[id] = true }
        return nil
      }
      if case .sleeper(let sleeper) = entry?.work {
        sleeper.continuation.resume(throwing: CancellationError())
      }
    }
  }

  /// Moves time forward by `duration`, running everything that falls due on the way.
  ///
  /// When it returns, every mock delivery due by the new time has run, in deadline order, and
  /// every sleep due by then has been resumed. A negative duration does nothing.
  ///
  /// > Note: The target is `now + duration` when the call starts, so two advances that run at
  /// > the same time from different tasks do not add up. To advance from several tasks at once,
  /// > use ``advance(to:)`` with absolute instants.
  public func advance(by duration: Duration) async {
    let target = state.withLock { $0.now.advanced(by: max(duration, .zero)) }
    await advance(to: target)
  }

  /// Moves time forward to `deadline`, running everything that falls due on the way.
  ///
  /// Time never moves backwards: a deadline in the past does nothing.
  public func advance(to deadline: Instant) async {
    beginProgress()
    defer { endProgress() }
    while let entry = takeNext(dueBy: deadline) {
      perform(entry.work)
    }
  }

  /// Advances time until nothing is scheduled, running everything in deadline order.
  ///
  /// Work that schedules more work keeps it running; code that schedules new work forever
  /// (a polling loop) never lets it return.
  public func run() async {
    beginProgress()
    defer { endProgress() }
    while let entry = takeNext(dueBy: nil) {
      perform(entry.work)
    }
  }

  /// Suspends until at least `count` sleeps are waiting on this clock.
  ///
  /// This is the hand-shake for code that sleeps on the clock from its own Swift task (a retry
  /// back-off): wait until it is asleep, then ``advance(by:)``.
  ///
  /// ```swift
  /// let call = Task { try await client.fetchWithRetry() }  // sleeps 1 s after a 503
  /// try await clock.waitForSleepers(count: 1)
  /// await clock.advance(by: .seconds(1))
  /// ```
  ///
  /// If `timeout` of real time passes first, the wait is reported as a test failure at the
  /// caller's line and throws ``WaitTimeoutError``.
  public func waitForSleepers(
    count: Int, timeout: Duration = .seconds(5), fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) async throws {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let reporter = FailureReporter()
    try await RealTimeWait.run(
      timeout: timeout,
      register: { id, continuation in
        state.withLock { state in
          if state.sleeperCount >= count { return true }
          state.sleeperWaiters[id] = SleeperWaiter(count: count, continuation: continuation)
          return false
        }
      },
      unregister: { [state] id in
        state.withLock { $0.sleeperWaiters.removeValue(forKey: id)?.continuation }
      },
      timedOut: { [state] in
        let (seen, now) = state.withLock { ($0.sleeperCount, $0.now) }
        let message =
          "Expected \(count) sleep(s) on the VirtualClock, but \(seen) were waiting after "
          + "\(timeout) of real time (virtual time is \(now)). The code under test may not have "
          + "reached its sleep, may sleep on another clock, or may have finished already."
        reporter.fail(message, at: site)
        return WaitTimeoutError(wait: "waitForSleepers(count: \(count))", message: message)
      })
  }

  /// Schedules `action(false)` to run `delay` after the current time (read in the same critical
  /// region); returns an id to cancel it with.
  ///
  /// If the stall watchdog ends the work instead (nothing advanced the clock for
  /// ``stallTimeout``), `action(true)` runs in its place, outside the lock.
  func schedule(
    after delay: Duration, _ action: @escaping @Sendable (_ stalled: Bool) -> Void
  ) -> UInt64 {
    let (id, arming) = state.withLock { state -> (UInt64, Arming?) in
      let id = state.makeID()
      let entry = Entry(
        deadline: state.now.advanced(by: delay), id: id,
        work: .action(action))
      return (id, enqueue(entry, in: &state))
    }
    if let arming { startWatchdog(arming) }
    return id
  }

  /// Removes scheduled work; returns whether it was still pending.
  @discardableResult
  func cancelScheduled(_ id: UInt64) -> Bool {
    state.withLock { $0.remove(id: id) != nil }
  }

  /// Removes and returns the earliest work due by `deadline` (any work when `nil`), with `now`
  /// set to its deadline; when nothing is due, moves `now` to `deadline` in the same critical
  /// region, so that work scheduled meanwhile is never left behind in the past.
  private func takeNext(dueBy deadline: Instant?) -> Entry? {
    state.withLock { state in
      guard let due = state.queue.firstDeadline, deadline.map({ due <= $0 }) ?? true else {
        if let deadline, state.now < deadline { state.now = deadline }
        return nil
      }
      if state.now < due { state.now = due }
      return state.queue.takeFirst()
    }
  }

  private func perform(_ work: Work) {
    switch work {
    case .action(let action): action(false)
    case .sleeper(let sleeper): sleeper.continuation.resume()
    }
  }

}
