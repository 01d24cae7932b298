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

  /// Work due at a deadline: a mock delivery, or a sleeping Swift task to resume.
  enum Work {
    /// A mock delivery: called with `false` when it falls due, or with `true` in its place
    /// when the stall watchdog ends it. One closure rather than two keeps a delayed answer to
    /// one allocated context.
    case action(@Sendable (_ stalled: Bool) -> Void)
    case sleeper(Sleeper)
  }

  /// A sleep's continuation, boxed. `CheckedContinuation` is a resilient type, so an entry that
  /// held one directly would have no layout known when this file is compiled, and every copy
  /// of an entry in the queue would go through the runtime's generic value witnesses: a quarter
  /// of a delayed answer's instructions. A box gives `Entry` a fixed layout.
  final class Sleeper: Sendable {
    let continuation: CheckedContinuation<Void, any Error>

    init(_ continuation: CheckedContinuation<Void, any Error>) {
      self.continuation = continuation
    }
  }

  private struct Entry {
    var deadline: Instant
    var id: UInt64
    var work: Work
  }

  /// The pending entries, in order: by deadline, then by insertion (equal deadlines keep their
  /// order).
  ///
  /// Taking the first entry is O(1): a taken slot is cleared (so that what it holds is released
  /// at once) and skipped, and the cleared slots are compacted away once they are half of the
  /// storage. So one `advance` through n entries moves O(n) of them, not the O(n²) that
  /// removing the first element of an array each time does.
  private struct EntryQueue {
    private var storage: [Entry?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    /// The first entry's deadline, read without copying the entry.
    var firstDeadline: Instant? { isEmpty ? nil : storage[head]?.deadline }
    /// The pending entries, first to last.
    var entries: [Entry] { storage[head...].compactMap { $0 } }

    /// Inserts after every entry due at or before `entry`'s deadline.
    mutating func insert(_ entry: Entry) {
      // The common case: work scheduled with the same delay, or a growing one, goes last.
      if count > 0, let last = storage[storage.count - 1]?.deadline, last <= entry.deadline {
        storage.append(entry)
        return
      }
      var low = head
      var high = storage.count
      while low < high {
        let mid = (low + high) / 2
        if let other = storage[mid], other.deadline <= entry.deadline {
          low = mid + 1
        } else {
          high = mid
        }
      }
      storage.insert(entry, at: low)
    }

    /// Removes and returns the first entry; `nil` when the queue is empty.
    mutating func takeFirst() -> Entry? {
      guard !isEmpty else { return nil }
      let entry = storage[head].take()
      head += 1
      defer { compactIfSparse() }
      return entry
    }

    /// Drops the taken slots once they are half of the storage, or all of it.
    private mutating func compactIfSparse() {
      if head == storage.count {
        storage.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 32, head * 2 >= storage.count {
        storage.removeFirst(head)
        head = 0
      }
    }

    mutating func remove(id: UInt64) -> Entry? {
      guard let index = storage[head...].firstIndex(where: { $0?.id == id }) else { return nil }
      return storage.remove(at: index)
    }

    /// Empties the queue and returns what it held, first to last.
    mutating func removeAll() -> [Entry] {
      defer {
        storage = []
        head = 0
      }
      return entries
    }
  }

  /// How a sleep began: cancelled before it could wait, already over, or waiting.
  private enum SleepStart {
    case cancelled
    case elapsed
    case enqueued(wakingWaiters: [CheckedContinuation<Void, any Error>], arming: Arming?)
  }

  /// A watchdog timer to start: its generation, and the real time it first checks at.
  private struct Arming {
    var generation: UInt64
    var checkAt: Duration
  }

  /// The stall watchdog's fields. It never touches the queue's order; it only reads the
  /// queue, and on a stall empties it.
  private struct Watchdog {
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
  private enum WatchdogCheck {
    case idle
    /// `confirming` when the limit has passed and the next check ends the work unless
    /// something advances the clock meanwhile.
    case checkAgain(at: Duration, confirming: Bool)
    case stalled([Entry], StallWatchdog.Snapshot)
  }

  private struct SleeperWaiter {
    var count: Int
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
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

  private let state = Locked(State())

  /// How long of real time a sleep or delivery may wait while nothing advances the clock
  /// before the clock reports a stall and ends what is waiting; `nil` when the check is off.
  public let stallTimeout: Duration?
  private let site: CallSite
  private let reporter: FailureReporter
  private let realTime: StallWatchdog.TimeSource

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
  public convenience init(
    stallTimeout: Duration? = .seconds(5), fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      stallTimeout: stallTimeout, realTime: ContinuousClock(), fileID: fileID,
      filePath: filePath, line: line, column: column)
  }

  /// Creates a clock whose watchdog measures "real time" on `realTime`, so that a test can move
  /// the watchdog's time deterministically (with another `VirtualClock`).
  package init<C: Clock>(
    stallTimeout: Duration?, realTime: C, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) where C.Duration == Duration {
    self.stallTimeout = stallTimeout.map { max($0, .zero) }
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

  // MARK: - The stall watchdog (real time; never part of the ordering above)

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
  private func enqueue(_ entry: Entry, in state: inout State) -> Arming? {
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

  private func beginProgress() {
    guard stallTimeout != nil else { return }
    state.withLock { $0.watchdog.advancing += 1 }
  }

  private func endProgress() {
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
  private func startWatchdog(_ arming: Arming) {
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
  private func checkForStall(at now: Duration, lateBy late: Duration, confirming: Bool)
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
  private func end(_ entries: [Entry], _ snapshot: StallWatchdog.Snapshot) {
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
