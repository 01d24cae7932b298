import Foundation
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `waitForRequests` returns only once the request's answer is scheduled or its task is held, so
/// a test can act on the clock or the spy at once. Each test repeats the hand-shake, since the
/// order it guards against was a race between two threads.
@Suite struct HandshakeTests {
  private let url = URL(string: "https://example.com/slow")!

  @Test func aDelayedAnswerIsOnTheClockWhenTheWaitReturns() async throws {
    for _ in 0..<3_000 {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      mock.stub(.any, with: .status(200).delayed(by: .seconds(2)))
      let call = Task { try await mock.data(from: url) }
      try await mock.waitForRequests(count: 1)
      let scheduled = clock.pendingCount == 1
      #expect(scheduled)
      await clock.advance(by: .seconds(2))
      if !scheduled { call.cancel() }  // so that a failure cannot hang the test
      let response = try? await call.value.1
      #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
  }

  @Test func aManualSpyHoldsTheTaskWhenTheWaitReturns() async throws {
    for _ in 0..<3_000 {
      let spy = SpySession()
      let call = Task { try await spy.data(from: url) }
      try await spy.waitForRequests(count: 1)
      let pending = try #require(spy.pendingTasks.first)
      spy.complete(pending, with: .status(202))
      let (_, response) = try await call.value
      #expect((response as? HTTPURLResponse)?.statusCode == 202)
    }
  }
}
