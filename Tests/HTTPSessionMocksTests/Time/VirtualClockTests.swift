import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct VirtualClockTests {
  private typealias Instant = VirtualClock.Instant

  private let url = URL(string: "https://api.example.com/slow")!

  /// Resumes a task on a mock that answers after `delay` on `clock`, and logs the virtual time
  /// its handler ran at under `label`.
  private func send(
    _ label: String, after delay: Duration, on clock: VirtualClock, to log: TimeLog
  ) {
    let mock = URLSessionMock(data: Data(), response: nil, error: nil, delay: delay, clock: clock)
    mock.dataTask(with: url) { _, _, _ in log.append(label, at: clock.now) }.resume()
  }

  // MARK: - Time

  @Test func startsAtZeroWithNothingScheduled() {
    let clock = VirtualClock()
    #expect(clock.now == Instant(offset: .zero))
    #expect(clock.pendingCount == 0)
    #expect(clock.nextDeadline == nil)
    #expect(clock.minimumResolution == .zero)
  }

  @Test func advanceByMovesTimeForward() async {
    let clock = VirtualClock()
    await clock.advance(by: .seconds(3))
    #expect(clock.now == Instant(offset: .seconds(3)))
    await clock.advance(by: .milliseconds(250))
    #expect(clock.now == Instant(offset: .milliseconds(3_250)))
  }

  @Test func advanceToMovesTimeToTheInstant() async {
    let clock = VirtualClock()
    await clock.advance(to: Instant(offset: .seconds(42)))
    #expect(clock.now == Instant(offset: .seconds(42)))
  }

  @Test func timeNeverMovesBackwards() async {
    let clock = VirtualClock()
    await clock.advance(by: .seconds(10))
    await clock.advance(to: Instant(offset: .seconds(4)))
    #expect(clock.now == Instant(offset: .seconds(10)))
    await clock.advance(by: .seconds(-5))
    #expect(clock.now == Instant(offset: .seconds(10)))
  }

  @Test func advancingToAPastInstantRunsNothingNew() async {
    let clock = VirtualClock()
    let log = TimeLog()
    await clock.advance(by: .seconds(10))
    send("later", after: .seconds(5), on: clock, to: log)
    await clock.advance(to: Instant(offset: .seconds(12)))
    #expect(log.labels.isEmpty)
    #expect(clock.now == Instant(offset: .seconds(12)))
    await clock.advance(by: .seconds(3))
    #expect(log.entries == [TimeLog.Entry(label: "later", at: Instant(offset: .seconds(15)))])
  }

  @Test func runAdvancesUntilNothingIsScheduled() async {
    let clock = VirtualClock()
    let log = TimeLog()
    send("b", after: .seconds(7), on: clock, to: log)
    send("a", after: .seconds(2), on: clock, to: log)
    #expect(clock.pendingCount == 2)
    #expect(clock.nextDeadline == Instant(offset: .seconds(2)))
    await clock.run()
    #expect(log.labels == ["a", "b"])
    #expect(clock.now == Instant(offset: .seconds(7)))
    #expect(clock.pendingCount == 0)
    #expect(clock.nextDeadline == nil)
  }

  @Test func runWithNothingScheduledLeavesTimeAlone() async {
    let clock = VirtualClock()
    await clock.advance(by: .seconds(1))
    await clock.run()
    #expect(clock.now == Instant(offset: .seconds(1)))
  }

  // MARK: - Order

  @Test func deliveriesRunInDeadlineOrder() async {
    let clock = VirtualClock()
    let log = TimeLog()
    send("three", after: .seconds(3), on: clock, to: log)
    send("one", after: .seconds(1), on: clock, to: log)
    send("two", after: .seconds(2), on: clock, to: log)
    await clock.advance(by: .seconds(3))
    #expect(log.labels == ["one", "two", "three"])
  }

  @Test func tiesRunFirstScheduledFirst() async {
    let clock = VirtualClock()
    let log = TimeLog()
    for label in ["first", "second", "third", "fourth"] {
      send(label, after: .seconds(5), on: clock, to: log)
    }
    send("earlier", after: .seconds(4), on: clock, to: log)
    await clock.advance(by: .seconds(5))
    #expect(log.labels == ["earlier", "first", "second", "third", "fourth"])
  }

  @Test func tiesKeepTheirOrderAcrossSeparateSchedulingTimes() async {
    let clock = VirtualClock()
    let log = TimeLog()
    send("scheduled at 0 for 6", after: .seconds(6), on: clock, to: log)
    await clock.advance(by: .seconds(2))
    send("scheduled at 2 for 6", after: .seconds(4), on: clock, to: log)
    await clock.advance(by: .seconds(4))
    #expect(log.labels == ["scheduled at 0 for 6", "scheduled at 2 for 6"])
  }

  @Test func workScheduledDuringAnAdvanceRunsInOrderWithWhatIsPending() async {
    // 40 deliveries, one a second: the queue drops taken entries in bulk after 32 of them, so
    // the handlers at 10 s and 35 s schedule work among pending entries before and after that.
    let clock = VirtualClock()
    let log = TimeLog()
    for second in 1...40 {
      let mock = URLSessionMock(
        data: Data(), response: nil, error: nil, delay: .seconds(second), clock: clock)
      mock.dataTask(with: url) { _, _, _ in
        log.append("\(second)", at: clock.now)
        guard second == 10 || second == 35 else { return }
        send("\(second) + 2.5", after: .milliseconds(2_500), on: clock, to: log)
      }.resume()
    }
    await clock.advance(by: .seconds(40))
    let expected = (1...40).flatMap { second in
      second == 12 || second == 37 ? ["\(second)", "\(second - 2) + 2.5"] : ["\(second)"]
    }
    #expect(log.labels == expected)
    #expect(clock.pendingCount == 0)
  }

  /// Random deliveries (four distinct delays, so many equal deadlines), cancels and advances,
  /// against a model of the queue: due work runs by deadline, then in the order it was
  /// scheduled, and a cancelled delivery never runs.
  @Test(arguments: 0..<20) func deliveriesCancelsAndAdvancesFollowAModelOfTheQueue(seed: Int)
    async throws
  {
    var random = SplitMix64(seed: UInt64(seed))
    let clock = VirtualClock(stallTimeout: nil)
    let log = TimeLog()
    var pending: [(deadline: Int, order: Int, label: String)] = []
    var tasks: [String: any HTTPDataTask] = [:]
    var expected: [String] = []
    var now = 0
    for order in 0..<200 {
      switch random.int(in: 0...9) {
      case 0..<6:
        let delay = random.int(in: 1...4)
        let label = "#\(order)"
        let mock = URLSessionMock(
          data: Data(), response: nil, error: nil, delay: .seconds(delay), clock: clock)
        let task = mock.dataTask(with: url) { _, _, error in
          let cancelled = (error as? URLError)?.code == .cancelled
          log.append(cancelled ? label + " cancelled" : label, at: clock.now)
        }
        task.resume()
        tasks[label] = task
        pending.append((now + delay, order, label))
      case 6..<8:
        guard !pending.isEmpty else { continue }
        let victim = pending.remove(at: random.int(in: 0...(pending.count - 1)))
        try #require(tasks[victim.label]).cancel()
        expected.append(victim.label + " cancelled")
      default:
        let step = random.int(in: 0...2)
        now += step
        await clock.advance(by: .seconds(step))
        let due = pending.filter { $0.deadline <= now }
        expected += due.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }.map(\.label)
        pending.removeAll { $0.deadline <= now }
      }
      #expect(clock.pendingCount == pending.count)
    }
    await clock.run()
    expected += pending.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }.map(\.label)
    #expect(log.labels == expected)
  }

  @Test func nowEqualsEachDeadlineWhileItsWorkRuns() async {
    let clock = VirtualClock()
    let log = TimeLog()
    send("a", after: .milliseconds(1_500), on: clock, to: log)
    send("b", after: .seconds(4), on: clock, to: log)
    await clock.advance(by: .seconds(10))
    #expect(
      log.entries == [
        TimeLog.Entry(label: "a", at: Instant(offset: .milliseconds(1_500))),
        TimeLog.Entry(label: "b", at: Instant(offset: .seconds(4))),
      ])
    #expect(clock.now == Instant(offset: .seconds(10)))
  }

  @Test func workScheduledByWorkThatFallsDueRunsInTheSameAdvance() async {
    let clock = VirtualClock()
    let log = TimeLog()
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(1), clock: clock)
    let url = url
    mock.dataTask(with: url) { _, _, _ in
      log.append("first", at: clock.now)
      mock.dataTask(with: url) { _, _, _ in log.append("second", at: clock.now) }.resume()
    }.resume()
    await clock.advance(by: .seconds(2))
    #expect(
      log.entries == [
        TimeLog.Entry(label: "first", at: Instant(offset: .seconds(1))),
        TimeLog.Entry(label: "second", at: Instant(offset: .seconds(2))),
      ])
  }

  // MARK: - Sleeping

  @Test func sleepEndsWhenTimeReachesItsDeadline() async throws {
    let clock = VirtualClock()
    let sleeper = Task {
      try await clock.sleep(until: Instant(offset: .seconds(5)))
      return clock.now
    }
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .seconds(4))
    #expect(clock.pendingCount == 1, "the sleep is still waiting at 4 s")
    await clock.advance(by: .seconds(1))
    #expect(clock.pendingCount == 0)
    #expect(try await sleeper.value == Instant(offset: .seconds(5)))
  }

  @Test func sleepForIsMeasuredFromNow() async throws {
    let clock = VirtualClock()
    await clock.advance(by: .seconds(100))
    let sleeper = Task { try await clock.sleep(for: .seconds(3)) }
    try await clock.waitForSleepers(count: 1)
    #expect(clock.nextDeadline == Instant(offset: .seconds(103)))
    await clock.advance(by: .seconds(3))
    try await sleeper.value
  }

  @Test func sleepUntilAPastOrPresentDeadlineReturnsAtOnce() async throws {
    let clock = VirtualClock()
    try await clock.sleep(until: clock.now)
    await clock.advance(by: .seconds(10))
    try await clock.sleep(until: Instant(offset: .seconds(3)))
    try await clock.sleep(for: .zero)
    #expect(clock.pendingCount == 0)
    #expect(clock.now == Instant(offset: .seconds(10)))
  }

  @Test func sleepThrowsCancellationErrorWhenItsTaskIsCancelled() async throws {
    let clock = VirtualClock()
    let sleeper = Task { try await clock.sleep(until: Instant(offset: .seconds(60))) }
    try await clock.waitForSleepers(count: 1)
    sleeper.cancel()
    let result = await sleeper.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(clock.pendingCount == 0, "the cancelled sleep left the queue")
    #expect(clock.now == Instant(offset: .zero))
  }

  @Test func sleepInAnAlreadyCancelledTaskThrowsCancellationError() async {
    let clock = VirtualClock()
    let sleeper = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(until: Instant(offset: .seconds(1)))
    }
    let result = await sleeper.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(clock.pendingCount == 0)
  }

  @Test func sleepersAndDeliveriesShareOneTimeline() async throws {
    let clock = VirtualClock()
    let log = TimeLog()
    send("delivery at 2", after: .seconds(2), on: clock, to: log)
    let sleeper = Task {
      try await clock.sleep(until: Instant(offset: .seconds(1)))
      return clock.now
    }
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .seconds(1))
    #expect(try await sleeper.value == Instant(offset: .seconds(1)))
    #expect(log.labels.isEmpty)
    await clock.advance(by: .seconds(1))
    #expect(log.labels == ["delivery at 2"])
  }

  // MARK: - waitForSleepers

  @Test func waitForSleepersReturnsOnceEnoughTasksAreAsleep() async throws {
    let clock = VirtualClock()
    let sleepers = (1...3).map { seconds in
      Task { try await clock.sleep(for: .seconds(seconds)) }
    }
    try await clock.waitForSleepers(count: 3)
    #expect(clock.pendingCount == 3)
    await clock.advance(by: .seconds(3))
    for sleeper in sleepers { try await sleeper.value }
  }

  @Test func waitForSleepersIsTheHandShakeForCodeThatSleepsBetweenRequests() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(status: 503)
    let url = url
    // Code under test: try, back off 2 s, try again.
    let client = Task {
      _ = try await mock.data(from: url)
      try await clock.sleep(for: .seconds(2))
      _ = try await mock.data(from: url)
    }
    try await clock.waitForSleepers(count: 1)
    #expect(mock.requests.count == 1)
    await clock.advance(by: .seconds(2))
    try await mock.waitForRequests(count: 2)
    try await client.value
    #expect(mock.requests.count == 2)
  }

  @Test func waitForSleepersReportsATimeout() async {
    let clock = VirtualClock()
    await expectReport {
      do {
        try await clock.waitForSleepers(count: 1, timeout: .milliseconds(50))
        Issue.record("waitForSleepers returned with nobody asleep")
      } catch {
        #expect(error is WaitTimeoutError)
      }
    } matching: { report in
      report.message.contains("Expected 1 sleep(s) on the VirtualClock, but 0 were waiting")
    }
  }

  @Test func cancellingWaitForSleepersThrowsCancellationError() async {
    let clock = VirtualClock()
    let waiter = Task { try await clock.waitForSleepers(count: 1, timeout: .seconds(3_600)) }
    waiter.cancel()
    let result = await waiter.result
    #expect(throws: CancellationError.self) { try result.get() }
  }

  // MARK: - As any Clock<Duration>

  /// Production-style code that only knows `any Clock<Duration>`.
  private func retry(
    times: Int, backOff: Duration, on clock: any Clock<Duration>,
    _ attempt: @Sendable () async throws -> Bool
  ) async throws -> Int {
    for number in 1...times {
      if try await attempt() { return number }
      if number < times { try await clock.sleep(for: backOff) }
    }
    return times
  }

  @Test func worksAsAnyClockOfDuration() async throws {
    let clock = VirtualClock()
    let anyClock: any Clock<Duration> = clock
    let mock = URLSessionMock(status: 503)
    let url = url
    let call = Task {
      try await retry(times: 3, backOff: .seconds(30), on: anyClock) {
        let (_, response) = try await mock.data(from: url)
        return (response as? HTTPURLResponse)?.statusCode == 200
      }
    }
    try await clock.waitForSleepers(count: 1)
    #expect(mock.requests.count == 1)
    await clock.advance(by: .seconds(30))
    try await clock.waitForSleepers(count: 1)
    #expect(mock.requests.count == 2)
    await clock.advance(by: .seconds(30))
    #expect(try await call.value == 3)
    #expect(mock.requests.count == 3)
    #expect(clock.now == Instant(offset: .seconds(60)))
  }

  @Test func instantsMeasureDurations() {
    let start = Instant(offset: .seconds(2))
    let later = start.advanced(by: .milliseconds(500))
    #expect(start < later)
    #expect(start.duration(to: later) == .milliseconds(500))
    #expect(later.duration(to: start) == .milliseconds(-500))
    #expect(later.description == Duration.milliseconds(2_500).description)
  }
}

/// Records, from any thread, which work ran and at what virtual time.
private struct TimeLog: Sendable {
  struct Entry: Equatable {
    var label: String
    var at: VirtualClock.Instant
  }

  private let storage = Shared<[Entry]>([])

  func append(_ label: String, at instant: VirtualClock.Instant) {
    storage.append(Entry(label: label, at: instant))
  }

  var entries: [Entry] { storage.current }
  var labels: [String] { entries.map(\.label) }
}
