import Foundation
import HTTPSessionMocks
import SampleClient
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Retrying `503` with back-off on a `VirtualClock`: call counts and virtual time, no waiting.
///
/// The hand-shake: the client sleeps on the clock from its own task, so the test waits until it
/// is asleep (`waitForSleepers`), advances the clock, then waits for the retry to be sent
/// (`waitForRequests`).
@Suite struct RetryTests {
  @Test func retriesA503AfterOneSecondThenTwo() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: [.status(503), .status(503), .json(User.octocat)])
    let client = makeClient(mock, clock: clock)

    let call = Task { try await client.fetchUser("octocat") }

    try await clock.waitForSleepers(count: 1)
    #expect(mock.requests.count == 1)
    #expect(clock.nextDeadline == VirtualClock.Instant(offset: .seconds(1)))
    await clock.advance(by: .seconds(1))
    try await mock.waitForRequests(count: 2)

    try await clock.waitForSleepers(count: 1)
    #expect(clock.nextDeadline == VirtualClock.Instant(offset: .seconds(3)))
    await clock.advance(by: .seconds(1))
    #expect(mock.requests.count == 2)  // still backing off: the second pause is 2 s
    await clock.advance(by: .seconds(1))

    #expect(try await call.value == .octocat)
    mock.verify(.get("/users/octocat"), called: .exactly(3))
    #expect(clock.now == VirtualClock.Instant(offset: .seconds(3)))
  }

  @Test func givesUpAfterTheLastAttempt() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(status: 503)
    let client = makeClient(mock, clock: clock, retryPolicy: RetryPolicy(maximumAttempts: 4))

    let call = Task { try await client.fetchUser("octocat") }
    for _ in 1...3 {
      try await clock.waitForSleepers(count: 1)
      await clock.advance(by: .seconds(30))
    }

    let error = await #expect(throws: GitHubError.self) { try await call.value }
    #expect(error?.statusCode == 503)
    mock.verify(.get("/users/octocat"), called: .exactly(4))
    #expect(clock.pendingCount == 0)
  }

  @Test func retryAfterReplacesTheBackOff() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock()
    mock.stub(
      .get("/users/octocat"),
      with: [.status(503, headers: ["Retry-After": "7"]), .json(User.octocat)])
    let client = makeClient(mock, clock: clock)

    let call = Task { try await client.fetchUser("octocat") }
    try await clock.waitForSleepers(count: 1)

    #expect(clock.nextDeadline == VirtualClock.Instant(offset: .seconds(7)))
    await clock.advance(by: .seconds(7))
    #expect(try await call.value == .octocat)
    mock.verify(.get("/users/octocat"), called: .exactly(2))
  }

  @Test(arguments: [500, 502, 504, 429])
  func otherFailuresAreNotRetried(status: Int) async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: [.status(status), .json(User.octocat)])
    // Zero back-off: if the client did retry, the retry would succeed at once.
    let client = makeClient(
      mock, clock: clock, retryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: .zero))

    let error = await #expect(throws: GitHubError.self) { try await client.fetchUser("octocat") }

    #expect(error?.statusCode == status)
    mock.verify(.get("/users/octocat"), called: .once)
  }

  @Test func cancellingDuringTheBackOffSendsNoRetry() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: [.status(503), .json(User.octocat)])
    let client = makeClient(mock, clock: clock)

    let call = Task { try await client.fetchUser("octocat") }
    try await clock.waitForSleepers(count: 1)
    call.cancel()

    await #expect(throws: CancellationError.self) { try await call.value }
    #expect(clock.pendingCount == 0)
    await clock.advance(by: .seconds(60))
    mock.verify(.get("/users/octocat"), called: .once)
  }

  @Test(
    arguments: [
      (attempt: 1, retryAfter: nil, expected: Duration.seconds(1)),
      (attempt: 2, retryAfter: nil, expected: .seconds(2)),
      (attempt: 3, retryAfter: nil, expected: .seconds(4)),
      (attempt: 9, retryAfter: nil, expected: .seconds(30)),
      (attempt: 1, retryAfter: .seconds(7), expected: .seconds(7)),
      (attempt: 1, retryAfter: .seconds(3_600), expected: .seconds(30)),
    ] as [(attempt: Int, retryAfter: Duration?, expected: Duration)])
  func backOffDoublesAndIsCapped(attempt: Int, retryAfter: Duration?, expected: Duration) {
    #expect(RetryPolicy.standard.delay(afterAttempt: attempt, retryAfter: retryAfter) == expected)
  }
}
