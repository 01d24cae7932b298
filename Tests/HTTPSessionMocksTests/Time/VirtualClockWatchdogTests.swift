import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The stall watchdog: a clock with work waiting that nobody advances fails fast and explained.
///
/// Tests that need a stall to happen inject a short limit (50 ms) and await the failure; tests
/// that need a stall not to happen move the watchdog's own time on a second `VirtualClock`
/// (the `package` initializer `VirtualClock(stallTimeout:realTime:)`), so nothing here depends on
/// how fast the machine is.
@Suite struct VirtualClockWatchdogTests {
  private typealias Instant = VirtualClock.Instant

  private let url = URL(string: "https://api.example.com/slow")!

  /// A mock on `clock` whose every answer arrives `delay` after `resume()`.
  private func delayedMock(_ delay: Duration, on clock: VirtualClock) -> URLSessionMock {
    URLSessionMock(data: Data("late".utf8), response: nil, error: nil, delay: delay, clock: clock)
  }

  // MARK: - The trap, turned into a failure

  @Test(.timeLimit(.minutes(1))) func anAdvanceBeforeTheSleepIsRegisteredFailsInsteadOfHanging()
    async
  {
    let (clock, line) = (VirtualClock(stallTimeout: .milliseconds(50)), #line)
    // The code under test does some work (its first request) before it sleeps; the gate holds
    // it there until the test has advanced, which is the order that hangs.
    let gate = AsyncStream<Void>.makeStream()
    await expectReport {
      let call = Task {
        for await _ in gate.stream { break }
        try await clock.sleep(for: .seconds(1))
        return "retried"
      }
      await clock.advance(by: .seconds(1))  // too early: nobody is asleep yet
      gate.continuation.yield()
      let result = await call.result
      #expect(throws: CancellationError.self) { try result.get() }
    } matching: { report in
      let comment = report.message
      return report.line == line
        && comment.contains("1 sleep (due at \(Instant(offset: .seconds(2))))")
        && comment.contains("virtual time is \(Instant(offset: .seconds(1)))")
        && comment.contains("before the code under test had started its sleep")
        && comment.contains("`try await clock.waitForSleepers(count: 1)` before `advance`")
        && comment.contains("`await clock.run()`")
        && comment.contains("the sleep throws CancellationError")
    }
    #expect(clock.watchdogFirings == 1)
    #expect(clock.pendingCount == 0)
    #expect(clock.now == Instant(offset: .seconds(1)), "the watchdog does not move virtual time")
  }

  @Test func severalStuckSleepsAreReportedOnceAndAllEnd() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    let clock = VirtualClock(stallTimeout: .seconds(5), realTime: realTime)
    let reports = Shared(0)
    try await expectReport {
      let sleepers = (1...3).map { seconds in
        Task { try await clock.sleep(for: .seconds(seconds)) }
      }
      try await clock.waitForSleepers(count: 3)
      // Then nothing advances the clock: the limit passes, and then the grace.
      try await realTime.waitForSleepers(count: 1)
      await realTime.advance(by: .seconds(5))
      try await realTime.waitForSleepers(count: 1)
      await realTime.advance(by: .seconds(1))
      for sleeper in sleepers {
        let result = await sleeper.result
        #expect(throws: CancellationError.self) { try result.get() }
      }
    } matching: { report in
      let comment = report.message
      let matches =
        comment.contains("3 sleeps (due at 1.0 seconds, 2.0 seconds, 3.0 seconds)")
        && comment.contains("waitForSleepers(count: 3)")
        && comment.contains("the sleeps throw CancellationError")
      if matches { reports.withLock { $0 += 1 } }
      return matches
    }
    #expect(reports.current == 1)
    #expect(clock.watchdogFirings == 1)
    #expect(clock.pendingCount == 0)
  }

  @Test(.timeLimit(.minutes(1))) func aStalledMockDeliveryFailsWithTimedOut() async {
    let (clock, line) = (VirtualClock(stallTimeout: .milliseconds(50)), #line)
    let mock = delayedMock(.seconds(30), on: clock)
    let seen = Deliveries()
    await expectReport {
      mock.dataTask(with: url, completionHandler: seen.handler).resume()
      await seen.waitForCount(1)  // the test never advances the clock
    } matching: { report in
      let comment = report.message
      return report.line == line
        && comment.contains("1 scheduled mock delivery (due at \(Instant(offset: .seconds(30))))")
        && comment.contains("the delivery fails with URLError(.timedOut)")
        && comment.contains("`await clock.run()`")
    }
    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .timedOut)
    #expect(seen.first?.urlError?.failingURL == url)
    #expect(seen.first?.data == nil)
    #expect(clock.pendingCount == 0)
    #expect(clock.watchdogFirings == 1)
  }

  @Test(.timeLimit(.minutes(1))) func aStalledAsyncRequestThrowsTimedOut() async {
    let clock = VirtualClock(stallTimeout: .milliseconds(50))
    let mock = delayedMock(.seconds(30), on: clock)
    let url = url
    await expectReport {
      await #expect { _ = try await mock.data(from: url) } throws: { error in
        (error as? URLError)?.code == .timedOut
      }
    } matching: { report in
      report.message.contains("the delivery fails with URLError(.timedOut)")
    }
  }

  // MARK: - What counts as progress

  @Test func aClockThatIsAdvancedRegularlyNeverStalls() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    let clock = VirtualClock(stallTimeout: .seconds(5), realTime: realTime)
    let mock = delayedMock(.seconds(100), on: clock)
    let seen = Deliveries()
    try await expectReport {
      mock.dataTask(with: url, completionHandler: seen.handler).resume()
      #expect(clock.isWatchdogArmed)
      // 40 s of the watchdog's time, with an advance every 4 s: never 5 s without progress.
      for _ in 1...10 {
        try await realTime.waitForSleepers(count: 1)  // the watchdog is waiting for its next check
        await realTime.advance(by: .seconds(4))
        await clock.advance(by: .seconds(1))
      }
      try await realTime.waitForSleepers(count: 1)
      #expect(clock.watchdogFirings == 0)
      #expect(seen.count == 0)
      #expect(clock.pendingCount == 1)
      // Then 5 s with no advance: the watchdog suspects a stall, and after its grace of 1 s
      // with still no advance, it ends the delivery.
      await realTime.advance(by: .seconds(5))
      try await realTime.waitForSleepers(count: 1)
      #expect(clock.watchdogFirings == 0)
      await realTime.advance(by: .seconds(1))
      await seen.waitForCount(1)
      #expect(clock.watchdogFirings == 1)
      #expect(seen.first?.urlError?.code == .timedOut)
      #expect(clock.now == Instant(offset: .seconds(10)))
    } matching: { report in
      report.message.contains("nothing advanced it for 5.0 seconds of real time")
    }
  }

  @Test func aTestStarvedPastTheLimitGetsAGracePeriodToAdvance() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    let clock = VirtualClock(stallTimeout: .seconds(5), realTime: realTime)
    let mock = delayedMock(.seconds(2), on: clock)
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    try await realTime.waitForSleepers(count: 1)
    // The machine is so loaded that the test's advance comes 9 s later, and the watchdog's own
    // timer is as late; the advance then runs during the watchdog's grace.
    await realTime.advance(by: .seconds(9))
    try await realTime.waitForSleepers(count: 1)
    await clock.advance(by: .seconds(2))
    #expect(seen.first?.statusCode == 200)
    #expect(seen.first?.error == nil)
    // A later wake-up that is itself late never ends work either.
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    await realTime.advance(by: .seconds(5))
    try await realTime.waitForSleepers(count: 1)
    await realTime.advance(by: .seconds(3))  // the grace is 1 s: this wake-up is 2 s late
    try await realTime.waitForSleepers(count: 1)
    #expect(clock.watchdogFirings == 0)
    await clock.run()
    #expect(seen.count == 2 && seen.all.allSatisfy { $0.statusCode == 200 })
  }

  @Test func timeWhileNothingIsWaitingNeverCounts() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    let clock = VirtualClock(stallTimeout: .seconds(5), realTime: realTime)
    let mock = delayedMock(.seconds(1), on: clock)
    mock.dataTask(with: url) { _, _, _ in }.resume()
    await clock.run()  // delivered: nothing is waiting from here on
    try await realTime.waitForSleepers(count: 1)
    await realTime.advance(by: .seconds(100))  // idle time, far past the limit
    mock.dataTask(with: url) { _, _, _ in }.resume()  // waiting again, from real time 100
    try await realTime.waitForSleepers(count: 1)  // the watchdog has checked and waits again
    #expect(clock.watchdogFirings == 0)
    #expect(clock.pendingCount == 1)
    await clock.run()
  }

  // MARK: - Off, default, and lifetime

  @Test func theDefaultLimitIsFiveSeconds() {
    #expect(VirtualClock().stallTimeout == .seconds(5))
    #expect(VirtualClock(stallTimeout: .seconds(60)).stallTimeout == .seconds(60))
  }

  @Test func nilTurnsTheWatchdogOff() async {
    let unwatched = VirtualClock(stallTimeout: nil)
    let watched = VirtualClock(stallTimeout: .seconds(3_600))
    let mocks = [delayedMock(.seconds(30), on: unwatched), delayedMock(.seconds(30), on: watched)]
    for mock in mocks { mock.dataTask(with: url) { _, _, _ in }.resume() }
    #expect(unwatched.stallTimeout == nil)
    #expect(unwatched.pendingCount == 1)
    #expect(!unwatched.isWatchdogArmed, "no timer for a clock without a limit")
    #expect(watched.isWatchdogArmed, "the same work on a watched clock arms its timer")
    await unwatched.run()
    await watched.run()
    #expect(mocks.allSatisfy { $0.requests.count == 1 })
  }

  @Test func nothingWaitingArmsNoTimer() async {
    let clock = VirtualClock(stallTimeout: .milliseconds(50))
    await clock.advance(by: .seconds(10))
    try? await clock.sleep(until: Instant(offset: .seconds(3)))  // already past: never waits
    #expect(!clock.isWatchdogArmed)
  }

  @Test func droppingTheClockStopsItsWatchdog() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    var clockRef: WeakRef?
    do {
      let clock = VirtualClock(stallTimeout: .seconds(5), realTime: realTime)
      let mock = delayedMock(.seconds(30), on: clock)
      mock.dataTask(with: url) { _, _, _ in }.resume()
      try await realTime.waitForSleepers(count: 1)
      #expect(clock.pendingCount == 1)
      clockRef = WeakRef(clock, "clock")
    }
    #expect(clockRef?.isAlive == false, "the watchdog holds its clock weakly")
    #expect(realTime.pendingCount == 0, "the watchdog's timer was cancelled with its clock")
  }
}

#if canImport(XCTest)
  import XCTest

  /// Under XCTest the stall is an `XCTFail` at the line that created the clock.
  final class VirtualClockWatchdogXCTests: FailureCapturingTestCase {
    func testAStalledSleepFailsAtTheLineThatMadeTheClock() async throws {
      let (clock, line) = (VirtualClock(stallTimeout: .milliseconds(50)), #line)
      var outcome: Result<Void, any Error>?
      let failures = await capturingFailures {
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        outcome = await sleeper.result  // the test never advances the clock
      }
      XCTAssertThrowsError(try outcome?.get()) { XCTAssertTrue($0 is CancellationError) }
      XCTAssertEqual(failures.count, 1)
      let failure = try XCTUnwrap(failures.first)
      XCTAssertEqual(failure.filePath, "\(#filePath)")
      XCTAssertEqual(failure.line, line)
      XCTAssertTrue(
        failure.description.contains(
          "`try await clock.waitForSleepers(count: 1)` before `advance`"),
        failure.description)
    }
  }
#endif
