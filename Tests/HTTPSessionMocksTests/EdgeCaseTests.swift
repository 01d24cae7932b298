import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

/// Edge cases found in review, each with the behaviour a user should be able to rely on.
@Suite struct EdgeCaseTests {
  @Test func atMostWithANegativeCountMeansNever() {
    #expect(CallCount.atMost(-1) == .never)
    #expect(CallCount.atMost(-1).accepts(0))
  }

  @Test func aMockThatPassesThroughToItselfFailsInsteadOfRecursing() {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .passThrough(to: mock)
    #expect(sendThroughLoop(mock, reporting: "leads back to itself") == .resourceUnavailable)
  }

  @Test func aSpyAndAMockThatForwardToEachOtherStopAfterSixteenForwards() {
    let mock = URLSessionMock()
    let spy = SpySession(wrapping: mock)
    mock.unmatchedRequestPolicy = .passThrough(to: spy)
    defer { mock.unmatchedRequestPolicy = .fail }  // the loop holds both doubles
    #expect(sendThroughLoop(spy) == .resourceUnavailable)
    // Sixteen forwards, alternately: the spy's nine requests and the mock's eight.
    #expect(spy.requests.count == 9)
    #expect(mock.requests.count == 8)
  }

  @Test func aLoopThroughASessionOfTheTestsOwnStopsAfterSixteenForwards() {
    let passing = PassingSession()
    let spy = SpySession(wrapping: passing)
    passing.target.withLock { $0 = spy }
    defer { passing.target.withLock { $0 = nil } }  // the loop holds both sessions
    #expect(sendThroughLoop(spy) == .resourceUnavailable)
    // The session's own code makes each next task, so the count travels in a task-local
    // value: sixteen forwards, and the seventeenth request fails.
    #expect(spy.requests.count == 17)
  }

  /// Sends one request into a loop of sessions that starts at `session`, expecting the loop's
  /// report (by default, that of a loop through a spy); returns the error code the request
  /// ended with.
  private func sendThroughLoop(
    _ session: some HTTPSession,
    reporting message: String = "was forwarded 16 times in a row: this SpySession leads back"
  ) -> URLError.Code? {
    let seen = Shared<(any Error)?>(nil)
    expectReport {
      session.dataTask(with: URL(string: "https://example.com/loop")!) { _, _, error in
        seen.withLock { $0 = error }
      }.resume()
    } matching: { report in
      report.message.contains(message)
    }
    return (seen.current as? URLError)?.code
  }

  @Test func removedStubsAreGoneFromRoutingAndReports() {
    let mock = URLSessionMock()
    for _ in 0..<1_000 {
      mock.stub(.get("/a"), with: .status(500)).remove()
      mock.stub(.get("/a/{id}"), with: .status(500)).remove()
    }
    mock.stub(.get("/a"), with: .status(200))
    #expect(route(mock, "GET", "https://e.com/a").status == 200)
    // What a removed stub left behind is visible in the near-miss report: only live stubs.
    expectReport {
      _ = route(mock, "GET", "https://e.com/b")
    } matching: { report in
      let text = report.message
      return text.contains("1. GET /a (registered at") && !text.contains("2. ")
    }
  }

  @Test func aStubsCapturesAreReleasedOutsideTheMocksLock() {
    let mock = URLSessionMock()
    let witness = DeinitWitness { _ = mock.scenarioState }  // would deadlock under the lock
    let stub = mock.stub(.get("/x")) { [witness] _ in
      withExtendedLifetime(witness) {}
      return .status(200)
    }
    stub.remove()
    mock.stub(.get("/y")) { [witness] _ in
      withExtendedLifetime(witness) {}
      return .status(200)
    }
    mock.removeAllStubs()
    #expect(mock.scenarioState == URLSessionMock.initialScenarioState)
  }

  @Test func aRelativeURLsPathIsReadFromItsFirstSegment() {
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: .status(204))
    let base = URL(string: "https://api.example.com/")!
    let relative = URL(string: "users/octocat", relativeTo: base)!
    #expect(route(mock, URLRequest(url: relative)).status == 204)
  }

  @Test func anEncodedSlashIsShownAsSentInReports() {
    let mock = URLSessionMock()
    mock.stub(.get("/a/b"), with: .status(200))
    expectReport {
      _ = route(mock, "GET", "https://e.com/a%2Fb")
    } matching: { report in
      report.message.contains("got /a%2Fb")
    }
  }
}

/// Runs `onDeinit` when it is released.
private final class DeinitWitness: Sendable {
  let onDeinit: @Sendable () -> Void
  init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
  deinit { onDeinit() }
}
