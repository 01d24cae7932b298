import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The doubles let go of everything once the test drops them: no reference cycles through
/// tasks, handlers, clocks, stubs or waits. Each test builds its objects in a `do` block, keeps
/// only weak references, and checks them after the block.
@Suite struct LeakTests {
  private func url(_ path: String) -> URL { URL(string: "https://example.com\(path)")! }

  @Test func mocksSpiesTasksStubsAndClocksAreFreedWhenDropped() async throws {
    var refs: [WeakRef] = []
    do {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      let now = mock.stub(.get("/now"), with: .text("now"))
      let later = mock.stub(
        .get("/later"), with: StubResponse.text("later").delayed(by: .seconds(1)))
      let dynamic = mock.stub(.get("/echo/{id}")) { _, parameters in .text(parameters["id"]!) }
      let forwarding = SpySession(wrapping: mock)
      let manual = SpySession()
      let tasks = [
        mock.dataTask(with: url("/now")) { _, _, _ in },
        mock.dataTask(with: url("/later")) { _, _, _ in },
        forwarding.dataTask(with: url("/echo/1")) { _, _, _ in },
        manual.dataTask(with: url("/manual")) { _, _, _ in },
      ]
      for task in tasks { task.resume() }
      #expect(manual.complete(tasks[3], with: .status(204)))
      await clock.advance(by: .seconds(1))
      _ = try await mock.data(from: url("/now"))
      _ = try await forwarding.data(from: url("/echo/2"))
      #expect(tasks.allSatisfy { $0.state == .completed })
      #expect(now.callCount == 2 && later.callCount == 1 && dynamic.callCount == 2)
      refs =
        [
          WeakRef(clock, "clock"), WeakRef(mock, "mock"), WeakRef(now, "stub /now"),
          WeakRef(later, "stub /later"), WeakRef(dynamic, "stub /echo"),
          WeakRef(forwarding, "forwarding spy"), WeakRef(manual, "manual spy"),
        ] + tasks.enumerated().map { WeakRef($0.element, "task \($0.offset)") }
    }
    #expect(survivors(refs) == [])
  }

  @Test func aCannedMockWithADelayOnAVirtualClockIsFreedAfterTheAdvance() async throws {
    // The benchmark's virtual-time shape: `URLSessionMock(data:response:error:delay:clock:)`,
    // whose one answer is built once and shared by every request.
    var refs: [WeakRef] = []
    do {
      let clock = VirtualClock()
      let mock = URLSessionMock(
        data: Data("x".utf8), response: nil, error: nil, delay: .seconds(30), clock: clock)
      let tasks = (0..<10).map { _ in mock.dataTask(with: url("/canned")) { _, _, _ in } }
      for task in tasks { task.resume() }
      await clock.advance(by: .seconds(30))
      #expect(tasks.allSatisfy { $0.state == .completed })
      refs =
        [WeakRef(clock, "clock"), WeakRef(mock, "mock")]
        + tasks.enumerated().map { WeakRef($0.element, "task \($0.offset)") }
    }
    #expect(survivors(refs) == [])
  }

  @Test func aStubHandleDoesNotKeepItsMockAlive() {
    var mockRef: WeakRef?
    let stub: Stub
    do {
      let mock = URLSessionMock()
      stub = mock.stub(.get("/a"), with: .status(200))
      mock.dataTask(with: url("/a")) { _, _, _ in }.resume()
      #expect(stub.callCount == 1)
      mockRef = WeakRef(mock, "mock")
    }
    #expect(mockRef?.isAlive == false)
    // The handle outlives its mock harmlessly.
    #expect(stub.callCount == 0)
    stub.times(1).whenState("x").willSetState("y").remove()
  }

  @Test func aRemovedStubReleasesItsResponder() {
    let mock = URLSessionMock()
    var probes: [WeakRef] = []
    do {
      let kept = LifeProbe("removed stub's responder")
      let cleared = LifeProbe("responder cleared by removeAllStubs")
      let stub = mock.stub(.get("/a")) { _ in
        withExtendedLifetime(kept) { .status(200) }
      }
      let other = mock.stub(.get("/b")) { _ in
        withExtendedLifetime(cleared) { .status(200) }
      }
      mock.dataTask(with: url("/a")) { _, _, _ in }.resume()
      mock.dataTask(with: url("/b")) { _, _, _ in }.resume()
      #expect(stub.callCount == 1 && other.callCount == 1)
      stub.remove()
      probes = [WeakRef(kept, kept.name), WeakRef(cleared, cleared.name)]
    }
    #expect(survivors(probes) == ["responder cleared by removeAllStubs"])
    mock.removeAllStubs()
    #expect(survivors(probes) == [])
  }

  @Test func pendingDeliveriesDoNotKeepTheMockAlive() async {
    let clock = VirtualClock()
    let delivered = Shared(0)
    var refs: [WeakRef] = []
    var handlerProbe: WeakRef?
    do {
      let mock = URLSessionMock(clock: clock)
      mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(5)))
      let probe = LifeProbe("handler")
      let task = mock.dataTask(with: url("/slow")) { _, response, _ in
        withExtendedLifetime(probe) {
          if (response as? HTTPURLResponse)?.statusCode == 200 { delivered.withLock { $0 += 1 } }
        }
      }
      task.resume()
      refs = [WeakRef(mock, "mock")]
      handlerProbe = WeakRef(probe, probe.name)
    }
    // The clock holds the pending answer and its task, not the mock.
    #expect(survivors(refs) == [])
    #expect(clock.pendingCount == 1)
    #expect(handlerProbe?.isAlive == true)
    // The task still completes as URLSession's would, then lets go of its handler.
    await clock.advance(by: .seconds(5))
    #expect(delivered.current == 1)
    #expect(clock.pendingCount == 0)
    #expect(handlerProbe?.isAlive == false)
  }

  @Test func droppingAClockWithPendingDeliveriesFreesEverything() async {
    var refs: [WeakRef] = []
    let ran = Shared(0)
    do {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(5)))
      for index in 0..<3 {
        let probe = LifeProbe("handler \(index)")
        let task = mock.dataTask(with: url("/slow/\(index)")) { _, _, _ in
          withExtendedLifetime(probe) { ran.withLock { $0 += 1 } }
        }
        task.resume()
        refs += [WeakRef(task, "task \(index)"), WeakRef(probe, probe.name)]
      }
      await clock.advance(by: .seconds(1))
      #expect(clock.pendingCount == 3)
      refs += [WeakRef(clock, "clock"), WeakRef(mock, "mock")]
    }
    #expect(survivors(refs) == [])
    #expect(ran.current == 0)
  }

  @Test func aForwardingSpyWithPendingDeliveriesIsFreed() async {
    var refs: [WeakRef] = []
    do {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(5)))
      let spy = SpySession(wrapping: mock)
      let probe = LifeProbe("handler")
      let running = spy.dataTask(with: url("/slow")) { _, _, _ in withExtendedLifetime(probe) {} }
      running.resume()
      let suspended = spy.dataTask(with: url("/never")) { _, _, _ in }
      #expect(clock.pendingCount == 1)
      refs = [
        WeakRef(clock, "clock"), WeakRef(mock, "mock"), WeakRef(spy, "spy"),
        WeakRef(running, "running task"), WeakRef(suspended, "suspended task"),
        WeakRef(probe, probe.name),
      ]
    }
    #expect(survivors(refs) == [])
  }

  @Test func aPassThroughPolicyWithPendingDeliveriesIsFreed() async {
    var refs: [WeakRef] = []
    do {
      let clock = VirtualClock()
      let backend = URLSessionMock(clock: clock)
      backend.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(5)))
      let mock = URLSessionMock()
      mock.unmatchedRequestPolicy = .passThrough(to: backend)
      let probe = LifeProbe("handler")
      let task = mock.dataTask(with: url("/slow")) { _, _, _ in withExtendedLifetime(probe) {} }
      task.resume()
      #expect(clock.pendingCount == 1)
      refs = [
        WeakRef(clock, "clock"), WeakRef(backend, "wrapped mock"), WeakRef(mock, "mock"),
        WeakRef(task, "task"), WeakRef(probe, probe.name),
      ]
    }
    #expect(survivors(refs) == [])
  }

  @Test func aForwardingSpysTaskThatWasNeverResumedIsFreedWhileTheSpyLives() {
    let mock = URLSessionMock(status: 200)
    let spy = SpySession(wrapping: mock)
    var refs: [WeakRef] = []
    do {
      let probe = LifeProbe("handler")
      let task = spy.dataTask(with: url("/never")) { _, _, _ in withExtendedLifetime(probe) {} }
      refs = [WeakRef(task, "task"), WeakRef(probe, probe.name)]
    }
    #expect(survivors(refs) == [])
    #expect(mock.events.isEmpty)  // nothing reached the wrapped session
    withExtendedLifetime(spy) {}
  }

  @Test func aManualSpyWithPendingTasksIsFreed() {
    var refs: [WeakRef] = []
    do {
      let spy = SpySession()
      let probe = LifeProbe("handler")
      let task = spy.dataTask(with: url("/held")) { _, _, _ in withExtendedLifetime(probe) {} }
      task.resume()
      #expect(spy.pendingTasks.count == 1)
      refs = [WeakRef(spy, "spy"), WeakRef(task, "task"), WeakRef(probe, probe.name)]
    }
    #expect(survivors(refs) == [])
  }

  @Test func handlersAreReleasedOnceTheyRanOrWereCancelled() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/now"), with: .status(200))
    mock.stub(.get("/later"), with: StubResponse.status(200).delayed(by: .seconds(1)))
    let manual = SpySession()
    let forwarding = SpySession(wrapping: mock)
    let ran = Shared([String]())

    // Each case: a session, a path, and what to do with the task once it is made.
    typealias Step = @Sendable (MockTask) async -> Void
    let resume: Step = { $0.resume() }
    let cases: [(String, any HTTPSession, String, Step)] = [
      ("answered at once", mock, "/now", resume),
      (
        "answered by the clock", mock, "/later",
        { task in
          task.resume()
          await clock.advance(by: .seconds(1))
        }
      ),
      ("cancelled before resume", mock, "/later", { $0.cancel() }),
      (
        "cancelled while pending on the clock", mock, "/later",
        { task in
          task.resume()
          task.cancel()
        }
      ),
      (
        "completed by the manual spy", manual, "/m",
        { task in
          task.resume()
          manual.complete(task, with: .status(201))
        }
      ),
      (
        "cancelled on the manual spy", manual, "/m",
        { task in
          task.resume()
          task.cancel()
        }
      ),
      (
        "forwarded and answered", forwarding, "/later",
        { task in
          task.resume()
          await clock.advance(by: .seconds(1))
        }
      ),
      (
        "forwarded and cancelled", forwarding, "/later",
        { task in
          task.resume()
          task.cancel()
        }
      ),
    ]
    for (name, session, path, step) in cases {
      var handlerProbe: WeakRef?
      let task: MockTask
      do {
        let probe = LifeProbe(name)
        handlerProbe = WeakRef(probe, name)
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { _, _, _ in
          withExtendedLifetime(probe) { ran.withLock { $0.append(name) } }
        }
        switch session {
        case let session as URLSessionMock:
          task = session.dataTask(with: url(path), completionHandler: handler)
        case let session as SpySession:
          task = session.dataTask(with: url(path), completionHandler: handler)
        default:
          Issue.record("unexpected session")
          return
        }
      }
      #expect(handlerProbe?.isAlive == true, "\(name): held until the task finishes")
      await step(task)
      #expect(task.state == .completed, "\(name)")
      // The task is still here; its handler is not.
      #expect(handlerProbe?.isAlive == false, "\(name): the handler was kept after it ran")
    }
    #expect(ran.current == cases.map(\.0))
  }

  @Test func aHandlerThatCapturesItsOwnTaskDoesNotLeakIt() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(1)))
    var refs: [WeakRef] = []
    do {
      for (index, cancel) in [false, true].enumerated() {
        let box = Shared<MockTask?>(nil)
        let task = mock.dataTask(with: url("/self/\(index)")) { _, _, _ in
          _ = box.current?.state  // the cycle task → handler → box → task
        }
        box.withLock { $0 = task }
        task.resume()
        if cancel { task.cancel() }
        refs += [WeakRef(task, "task \(index)"), WeakRef(box, "box \(index)")]
      }
    }
    // The delayed one is still running: the clock holds it, and so does its own cycle.
    #expect(survivors(refs) == ["task 0", "box 0"])
    await clock.advance(by: .seconds(1))
    #expect(survivors(refs) == [])
  }

  @Test func cancelledWaitsLetGoOfTheMockAndTheClock() async throws {
    var refs: [WeakRef] = []
    do {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      let spy = SpySession()
      // Waits cancelled before they start register and unregister at once; the others are
      // cancelled while they wait (or, if the cancel comes first, before they register).
      var waits: [Task<Void, any Error>] = []
      for index in 0..<12 {
        let early = (index / 3).isMultiple(of: 2)
        waits.append(
          Task {
            if early { withUnsafeCurrentTask { $0?.cancel() } }
            switch index % 3 {
            case 0: try await mock.waitForRequests(count: 1)
            case 1: try await spy.waitForRequests(count: 1)
            default: try await clock.waitForSleepers(count: 2)  // only one ever sleeps
            }
          })
      }
      // Sleepers cancelled on the clock.
      let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
      try await clock.waitForSleepers(count: 1)
      sleeper.cancel()
      for wait in waits { wait.cancel() }
      for wait in waits + [sleeper] {
        await #expect(throws: CancellationError.self) { try await wait.value }
      }
      #expect(clock.pendingCount == 0)
      refs = [WeakRef(clock, "clock"), WeakRef(mock, "mock"), WeakRef(spy, "spy")]
    }
    #expect(survivors(refs) == [])
  }
}
