import Foundation

/// A `Clock` whose time moves only when the test says so.
///
/// Time starts at zero and moves only through ``advance(by:)``, ``advance(to:)`` and ``run()``.
/// Mock deliveries scheduled on it (see ``URLSessionMock/init(data:response:error:delay:clock:fileID:filePath:line:column:)``)
/// and `sleep(until:tolerance:)` calls are due at deadlines; when `advance` returns, every
/// mock delivery due by then has run, in deadline order, first-scheduled first on ties, with
/// ``now`` set to each deadline before its work runs.
///
/// Production code that takes `any Clock<Duration>` (retry back-off, timeouts) can be driven by
/// it too:
///
/// ```swift
/// // Production
/// func fetchWithRetry(clock: any Clock<Duration>) async throws -> Data {
///   ...
///   try await clock.sleep(for: .seconds(2))
///   ...
/// }
///
/// // Test
/// let clock = VirtualClock()
/// let mock = URLSessionMock(data: body, response: nil, error: nil, delay: .seconds(30), clock: clock)
/// mock.dataTask(with: url) { data, _, _ in ... }.resume()
/// await clock.advance(by: .seconds(30))  // the handler has run when this returns
/// ```
///
/// > Important: A sleeping Swift task is resumed by `advance`, but it runs on its own
/// > executor afterwards. To wait until such a task has issued its next request, use
/// > ``URLSessionMock``'s `waitForRequests(count:timeout:)`; to wait until code under test has
/// > started sleeping before you advance, use ``waitForSleepers(count:timeout:fileID:filePath:line:column:)``.
public final class VirtualClock: Clock, Sendable {

  /// A point in virtual time: a duration since the clock's zero.
  public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
    /// How far this instant is from the clock's zero.
    public var offset: Duration

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
    case action(@Sendable () -> Void)
    case sleeper(CheckedContinuation<Void, any Error>)
  }

  private struct Entry {
    var deadline: Instant
    var id: UInt64
    var work: Work
  }

  /// How a sleep began: cancelled before it could wait, already over, or waiting.
  private enum SleepStart {
    case cancelled
    case elapsed
    case enqueued(wakingWaiters: [CheckedContinuation<Void, any Error>])
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
    var queue: [Entry] = []
    /// Sleeps between their start and their entry in the queue, by id: `true` once their task
    /// was cancelled in that gap (then they end at once instead of waiting).
    var startingSleeps: [UInt64: Bool] = [:]
    var sleeperWaiters: [ObjectIdentifier: SleeperWaiter] = [:]

    var sleeperCount: Int {
      queue.reduce(0) { count, entry in
        if case .sleeper = entry.work { return count + 1 }
        return count
      }
    }

    mutating func makeID() -> UInt64 {
      nextID += 1
      return nextID
    }

    mutating func insert(_ entry: Entry) {
      // Binary search for the first entry later than this one; equal deadlines keep their order.
      var low = 0
      var high = queue.count
      while low < high {
        let mid = (low + high) / 2
        if queue[mid].deadline <= entry.deadline { low = mid + 1 } else { high = mid }
      }
      queue.insert(entry, at: low)
    }

    mutating func remove(id: UInt64) -> Entry? {
      guard let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
      return queue.remove(at: index)
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

  /// Creates a clock at time zero with nothing scheduled.
  public init() {}

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
    state.withLock { $0.queue.first?.deadline }
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
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let outcome = state.withLock { state -> SleepStart in
          if state.startingSleeps.removeValue(forKey: id) == true { return .cancelled }
          // Time may have reached the deadline since it was checked: then the sleep is over.
          if state.now >= deadline { return .elapsed }
          state.insert(Entry(deadline: deadline, id: id, work: .sleeper(continuation)))
          return .enqueued(wakingWaiters: state.satisfiedSleeperWaiters())
        }
        switch outcome {
        case .cancelled: continuation.resume(throwing: CancellationError())
        case .elapsed: continuation.resume()
        case .enqueued(let waiters): for waiter in waiters { waiter.resume() }
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
      if case .sleeper(let continuation) = entry?.work {
        continuation.resume(throwing: CancellationError())
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
    while let entry = takeNext(dueBy: deadline) {
      perform(entry.work)
    }
  }

  /// Advances time until nothing is scheduled, running everything in deadline order.
  ///
  /// Work that schedules more work keeps it running; code that schedules new work forever
  /// (a polling loop) never lets it return.
  public func run() async {
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

  /// Schedules `action` to run `delay` after the current time (read in the same critical region);
  /// returns an id to cancel it with.
  func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
    state.withLock { state in
      let id = state.makeID()
      state.insert(Entry(deadline: state.now.advanced(by: delay), id: id, work: .action(action)))
      return id
    }
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
      guard let first = state.queue.first, deadline.map({ first.deadline <= $0 }) ?? true else {
        if let deadline, state.now < deadline { state.now = deadline }
        return nil
      }
      state.queue.removeFirst()
      if state.now < first.deadline { state.now = first.deadline }
      return first
    }
  }

  private func perform(_ work: Work) {
    switch work {
    case .action(let action): action()
    case .sleeper(let continuation): continuation.resume()
    }
  }
}
