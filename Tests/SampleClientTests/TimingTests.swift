import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import SampleClient
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Slow answers, timeouts and cancellation, all on virtual time.
@Suite struct TimingTests {
  @Test func aDelayedAnswerArrivesWhenTheClockReachesIt() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)  // delays run on the mock's clock
    mock.stub(.get("/users/octocat"), with: .json(User.octocat).delayed(by: .seconds(2)))
    let client = makeClient(mock, clock: clock)
    let outcomes = Outcomes<Result<User, GitHubError>>()

    client.fetchUser("octocat", completion: outcomes.append)

    await clock.advance(by: .milliseconds(1_999))
    #expect(outcomes.count == 0)  // still loading
    await clock.advance(by: .milliseconds(1))
    #expect(outcomes.count == 1)
    #expect(try outcomes.last?.get() == .octocat)
  }

  @Test func anAnswerBeforeTheTimeoutWins() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(json: User.octocat, delay: .seconds(2), clock: clock)
    let client = makeClient(mock, clock: clock, timeout: .seconds(10))

    let call = Task { try await client.fetchUser("octocat") }
    try await mock.waitForRequests(count: 1)
    try await clock.waitForSleepers(count: 1)  // the client's timeout is running
    await clock.advance(by: .seconds(2))

    #expect(try await call.value == .octocat)
    #expect(clock.pendingCount == 0)  // the timeout was called off
  }

  @Test func aSlowAnswerTimesOut() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(json: User.octocat, delay: .seconds(30), clock: clock)
    let client = makeClient(mock, clock: clock, timeout: .seconds(10))

    let call = Task { try await client.fetchUser("octocat") }
    try await mock.waitForRequests(count: 1)
    try await clock.waitForSleepers(count: 1)
    await clock.advance(by: .seconds(10))

    let error = await #expect(throws: GitHubError.self) { try await call.value }
    #expect(transportCode(error) == .timedOut)
    #expect(clock.now == VirtualClock.Instant(offset: .seconds(10)))
    // The request was cancelled, so its 30 s answer will never be delivered.
    #expect(clock.pendingCount == 0)
    #expect(mock.events.contains { $0.kind == .cancelled })
  }

  @Test func cancellingAnInFlightAsyncCallThrowsCancellationError() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(json: User.octocat, delay: .seconds(5), clock: clock)
    let client = makeClient(mock, clock: clock)

    let call = Task { try await client.fetchUser("octocat") }
    try await mock.waitForRequests(count: 1)
    call.cancel()

    await #expect(throws: CancellationError.self) { try await call.value }
    let kinds = mock.events.map(\.kind)
    #expect(kinds.prefix(3) == [.created(.data), .resumed, .cancelled])
    guard case .completed(statusCode: nil, error: .some) = kinds.last, kinds.count == 4 else {
      Issue.record("Expected the task to complete once, with an error: \(mock.events)")
      return
    }
    #expect(clock.pendingCount == 0)
  }

  @Test func cancellingTheReturnedTaskDeliversCancelledOnce() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(json: User.octocat, delay: .seconds(5), clock: clock)
    let client = makeClient(mock, clock: clock)
    let outcomes = Outcomes<Result<User, GitHubError>>()

    let task = client.fetchUser("octocat", completion: outcomes.append)
    #expect(task.state == .running)
    task.cancel()

    #expect(outcomes.count == 1)
    #expect(transportCode(outcomes.last?.failure) == .cancelled)
    await clock.advance(by: .seconds(5))
    #expect(outcomes.count == 1)  // the canned answer lost to the cancel
    #expect(task.state == .completed)
  }
}
