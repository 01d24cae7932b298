import Foundation
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The package's own seam for looking at failure reports (`withCapturedReports`), which the
/// failure-path tests use instead of recording real issues.
@Suite struct ReportCaptureTests {
  private let known = URL(string: "https://example.com/known")!
  private let unknown = URL(string: "https://example.com/unknown")!

  @Test func aReportOnTheScopesTaskIsCapturedWithItsSeverityAndLocation() throws {
    let outside = URLSessionMock()  // made outside the scope: its report is still on this task
    let verifyLine = #line + 2
    let (passed, reports) = withCapturedReports {
      outside.verify(.get("/never"), called: .once)
    }
    #expect(!passed)
    #expect(reports.count == 1)
    let report = try #require(reports.first)
    #expect(report.severity == .failure)
    #expect(report.message.hasPrefix("Expected GET /never to be called once"))
    #expect(report.line == verifyLine)
    #expect(report.fileID == #fileID)
    #expect(report.filePath == #filePath)
  }

  @Test func aReportFromATaskWithoutTheScopeReachesTheScopeTheDoubleWasMadeIn() async {
    // The clock is advanced on a detached task, which carries neither the test nor the scope:
    // the delayed answer's handler makes an unmatched request there. Only the scope the mock
    // was made in can see that report (sent to Swift Testing, it would reach no test).
    let clock = VirtualClock()
    let unknown = unknown
    let (mockLine, reports) = await withCapturedReports {
      let (mock, mockLine) = (URLSessionMock(clock: clock), #line)
      mock.stub(.get("/known"), with: .status(200).delayed(by: .seconds(1)))
      mock.dataTask(with: known) { _, _, _ in
        mock.dataTask(with: unknown) { _, _, _ in }.resume()
      }.resume()
      await Task.detached { await clock.advance(by: .seconds(1)) }.value
      return mockLine
    }
    #expect(reports.count == 1)
    #expect(reports.first?.message.hasPrefix("No stub matches GET \(unknown)") == true)
    #expect(reports.first?.line == mockLine)
  }

  @Test func aWarningIsCapturedAsAWarning() {
    let (_, reports) = withCapturedReports {
      let mock = URLSessionMock(status: 200, delay: .seconds(3_600))
      let task = mock.dataTask(with: known) { _, _, _ in }
      task.resume()
      task.cancel()
    }
    #expect(reports.map(\.severity) == [.warning])
    #expect(reports.first?.message.contains("of real time") == true)
  }

  @Test func aDoubleMadeInAnEndedScopeReportsToTheScopeCurrentThen() {
    let (_, outer) = withCapturedReports {
      let (mock, inner) = withCapturedReports { URLSessionMock() }
      #expect(inner.isEmpty)
      route(mock, routingRequest("GET", unknown.absoluteString))
    }
    #expect(outer.count == 1)
    #expect(outer.first?.message.hasPrefix("No stub matches GET \(unknown)") == true)
  }

  @Test func theReportsOfABodyThatThrowsGoOnToTheEnclosingScope() {
    struct Stop: Error {}
    let (_, outer) = withCapturedReports {
      #expect(throws: Stop.self) {
        try withCapturedReports {
          route(URLSessionMock(), routingRequest("GET", unknown.absoluteString))
          throw Stop()
        }
      }
    }
    #expect(outer.count == 1)
    #expect(outer.first?.message.hasPrefix("No stub matches GET \(unknown)") == true)
  }

  @Test func aPassingCallCapturesNothing() {
    let (passed, reports) = withCapturedReports {
      let mock = URLSessionMock(status: 200)
      route(mock, routingRequest("GET", known.absoluteString))
      return mock.verify(.get("/known"), called: .once)
    }
    #expect(passed)
    #expect(reports.isEmpty)
  }
}

/// The relay that carries a test's context to work a door runs on its own threads.
@Suite struct TestContextRelayTests {
  @Test func workRelayedFromAnotherThreadReportsInTheContextItWasCapturedIn() async throws {
    // The mock is made outside the scope, and the request is made on a thread that belongs to
    // no task: only the context captured in the relay can bring the report into the scope.
    let mock = URLSessionMock()
    let reports = await capturedReports {
      guard let relay = TestContextRelay.captureIfInTest() else {
        Issue.record("no relay inside a test")
        return
      }
      await onAThreadOfItsOwn { done in
        relay.run {
          mock.dataTask(with: URL(string: "https://x.test/relayed")!) { _, _, _ in }.resume()
          done()
        }
      }
      relay.close()
    }
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("https://x.test/relayed") == true)
  }

  @Test func reportsMadeOnAnotherThreadInsideWithReportsAreRecordedBeforeItReturns() async throws {
    // The thread looks at the capture as soon as `withReports` returns: the report is there
    // only if it was recorded on the relay before that. (The relay has a thread of its own, as
    // the server's do: a relay on the cooperative pool can wait seconds for a thread while
    // other tests block the pool, and `withReports` gives up waiting after 5 s.)
    let mock = URLSessionMock()
    let reports = await capturedReports {
      guard let relay = TestContextRelay.captureIfInTest(onThreadOfItsOwn: true) else {
        Issue.record("no relay inside a test")
        return
      }
      guard let peek = capturedReportsPeek() else {
        Issue.record("no capture scope")
        return
      }
      let seen = Shared<[Int]>([])
      await onAThreadOfItsOwn { done in
        withReports(relayedThrough: relay) {
          mock.dataTask(with: URL(string: "https://x.test/diverted")!) { _, _, _ in }.resume()
        }
        seen.append(peek().count)
        done()
      }
      #expect(seen.current == [1], "the report was not in the scope when withReports returned")
    }
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("https://x.test/diverted") == true)
  }

  @Test func reportsDivertedToAClosedRelayAreRecordedOnceOnTheCallersThread() throws {
    // A closed relay runs its jobs on the caller's thread, where the diversion is still set:
    // the report must be recorded there once, not diverted again and again.
    let mock = URLSessionMock()
    let reports = capturedReports {
      guard let relay = TestContextRelay.captureIfInTest() else {
        Issue.record("no relay inside a test")
        return
      }
      relay.close()
      withReports(relayedThrough: relay) {
        mock.dataTask(with: URL(string: "https://x.test/closed")!) { _, _, _ in }.resume()
      }
    }
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("https://x.test/closed") == true)
  }

  @Test func aClosedRelayRunsJobsAtOnceOnTheCallersThread() throws {
    let relay = try #require(TestContextRelay.captureIfInTest())
    relay.close()
    let order = Shared<[Int]>([])
    relay.run { order.append(1) }
    order.append(2)
    #expect(order.current == [1, 2])
    #expect(relay.runAndWait { order.append(3) })
    #expect(order.current == [1, 2, 3])
  }

  @Test func aRelayOnAThreadOfItsOwnRunsWhileEveryPoolThreadIsBlocked() async throws {
    // Tasks that block until the relay's job has run take every thread of the cooperative pool
    // (and more are queued behind them). A relay on the pool could not run its job until they
    // let go, so `runAndWait` would give up after its timeout and this test would fail; one
    // on a thread of its own runs it at once.
    let relay = try #require(TestContextRelay.captureIfInTest(onThreadOfItsOwn: true))
    let blockers = 2 * max(ProcessInfo.processInfo.activeProcessorCount, 2)
    let ran = DispatchSemaphore(value: 0)
    let result = Shared<[Int]>([])
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<blockers {
        group.addTask { _ = ran.wait(timeout: .now() + 120) }
      }
      Thread {
        let inTime = relay.runAndWait(timeout: .seconds(60)) { result.append(1) }
        result.append(inTime ? 2 : -2)
        for _ in 0..<blockers { ran.signal() }
      }.start()
    }
    relay.close()
    #expect(result.current == [1, 2])
  }

  @Test func jobsRunOneAtATimeInTheOrderGiven() async throws {
    let relay = try #require(TestContextRelay.captureIfInTest())
    let order = Shared<[Int]>([])
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      for index in 0..<50 {
        relay.run {
          order.append(index)
          if index == 49 { done.resume() }
        }
      }
    }
    relay.close()
    #expect(order.current == Array(0..<50))
  }

  /// Runs `body` on a new thread, which belongs to no task, and returns once it calls `done`.
  private func onAThreadOfItsOwn(
    _ body: @escaping @Sendable (_ done: @escaping @Sendable () -> Void) -> Void
  )
    async
  {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      Thread { body { continuation.resume() } }.start()
    }
  }
}
