import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Many threads and Swift tasks on one mock, one forwarding spy and one manual spy, with a
/// virtual clock moving at the same time; afterwards every count is exact. CI runs this suite
/// under the thread sanitizer too.
@Suite struct StressTests {
  /// What a worker does with one task.
  enum Plan: Int, CaseIterable {
    /// Mock, immediate stub: resume.
    case mockResume
    /// Mock, immediate stub: resume, cancel, resume, cancel (the task is already complete).
    case mockResumeCancelTwice
    /// Mock, immediate stub: cancel, then resume (nothing is sent).
    case mockCancelThenResume
    /// Mock, delayed stub: resume, then cancel, racing the clock.
    case mockDelayedResumeCancel
    /// Mock, delayed stub: resume twice; the clock delivers it.
    case mockDelayedResumeTwice
    /// Forwarding spy, immediate stub: resume.
    case spyResume
    /// Forwarding spy, delayed stub: resume; the clock delivers it.
    case spyDelayedResume
    /// Forwarding spy, delayed stub: resume, then cancel, racing the clock.
    case spyDelayedResumeCancel
    /// Forwarding spy, delayed stub: cancel, then resume (nothing is sent).
    case spyCancelThenResume

    var usesSpy: Bool { rawValue >= Plan.spyResume.rawValue }
    var isDelayed: Bool {
      switch self {
      case .mockDelayedResumeCancel, .mockDelayedResumeTwice, .spyDelayedResume,
        .spyDelayedResumeCancel, .spyCancelThenResume:
        return true
      default: return false
      }
    }
    var sends: Bool { self != .mockCancelThenResume && self != .spyCancelThenResume }
    var racesTheClock: Bool { self == .mockDelayedResumeCancel || self == .spyDelayedResumeCancel }
    var alwaysCancelled: Bool { !sends }
  }

  @Test func threadsAndTasksShareOneMockAndOneForwardingSpy() async throws {
    let workers = 8
    let perWorker = Plan.allCases.count * 5
    let total = workers * perWorker
    let plans = (0..<total).map { Plan.allCases[$0 % Plan.allCases.count] }

    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    let nowStub = mock.stub(.get("/now/{id}"), with: .text("now"))
    let laterStub = mock.stub(
      .get("/later/{id}"), with: StubResponse.text("later").delayed(by: .milliseconds(100)))
    let spy = SpySession(wrapping: mock)
    let ledger = HandlerLedger(count: total)
    let identifiers = Shared([Int](repeating: 0, count: total))
    let workersDone = Shared(false)

    let mockSent = plans.filter(\.sends).count
    let spySent = plans.filter { $0.sends && $0.usesSpy }.count

    try await withThrowingTaskGroup(of: Void.self) { group in
      // Waiters from many tasks, for counts all along the way.
      for waiter in 0..<16 {
        group.addTask { try await mock.waitForRequests(count: 1 + waiter * (mockSent - 1) / 15) }
      }
      for waiter in 0..<8 {
        group.addTask { try await spy.waitForRequests(count: 1 + waiter * (spySent - 1) / 7) }
      }
      // The clock moves while the workers run.
      group.addTask {
        while !workersDone.current {
          await clock.advance(by: .milliseconds(50))
          await Task.yield()
        }
      }
      group.addTask {
        await runOnThreads(workers) { worker in
          for item in 0..<perWorker {
            let index = worker * perWorker + item
            let plan = plans[index]
            let url = URL(
              string: "https://example.com/\(plan.isDelayed ? "later" : "now")/\(index)")!
            let task =
              plan.usesSpy
              ? spy.dataTask(with: url, completionHandler: ledger.handler(index))
              : mock.dataTask(with: url, completionHandler: ledger.handler(index))
            identifiers.withLock { $0[index] = task.taskIdentifier }
            switch plan {
            case .mockResume, .spyResume, .spyDelayedResume:
              task.resume()
            case .mockResumeCancelTwice:
              task.resume()
              task.cancel()
              task.resume()
              task.cancel()
            case .mockCancelThenResume, .spyCancelThenResume:
              task.cancel()
              task.resume()
            case .mockDelayedResumeCancel, .spyDelayedResumeCancel:
              task.resume()
              task.cancel()
            case .mockDelayedResumeTwice:
              task.resume()
              task.resume()
            }
          }
        }
        workersDone.withLock { $0 = true }
      }
      try await group.waitForAll()
    }
    await clock.run()

    // Every handler ran exactly once.
    #expect(ledger.allCalls == Array(repeating: 1, count: total))
    // Requests sent: every task whose first call was resume(); forwarded ones reach the mock too.
    #expect(mock.requests.count == mockSent)
    #expect(spy.requests.count == spySent)
    #expect(nowStub.callCount == plans.filter { $0.sends && !$0.isDelayed }.count)
    #expect(laterStub.callCount == plans.filter { $0.sends && $0.isDelayed }.count)
    #expect(clock.pendingCount == 0)

    // What each handler got fits the plan.
    let outcomes = ledger.allOutcomes
    for (index, plan) in plans.enumerated() {
      let outcome = outcomes[index]
      let expected: [DeliveredOutcome]
      if plan.alwaysCancelled {
        expected = [.failure(.cancelled)]
      } else if plan.racesTheClock {
        expected = [.failure(.cancelled), .success(status: 200, body: "later")]
      } else {
        expected = [.success(status: 200, body: plan.isDelayed ? "later" : "now")]
      }
      #expect(
        outcome.map(expected.contains) == true,
        "task \(index) (\(plan)) got \(String(describing: outcome))")
    }

    // The journals: each task's history is whole and fits its completion.
    let mockEvents = mock.events
    let spyEvents = spy.events
    #expect(JournalAudit.problems(in: mockEvents, cancelMustWin: true) == [])
    #expect(JournalAudit.problems(in: spyEvents, cancelMustWin: false) == [])
    let spyTasks = plans.filter(\.usesSpy).count
    // Each of the spy's tasks that was sent has a task on the mock behind it, made when it was
    // resumed; one cancelled first never reached the mock.
    let mockTasks = total - spyTasks + spySent
    #expect(occurrences(.created(.data), in: mockEvents) == mockTasks)
    #expect(occurrences(.created(.data), in: spyEvents) == spyTasks)
    #expect(occurrences(.resumed, in: mockEvents) == mockSent)
    #expect(occurrences(.resumed, in: spyEvents) == spySent)
    #expect(
      mockEvents.filter { if case .completed = $0.kind { true } else { false } }.count
        == mockTasks)
    // A mock task's cancellation is recorded exactly when its handler got URLError(.cancelled).
    let mockHistories = JournalAudit.histories(mockEvents)
    let spyHistories = JournalAudit.histories(spyEvents)
    for (index, plan) in plans.enumerated() {
      let identifier = identifiers.current[index]
      let history = (plan.usesSpy ? spyHistories : mockHistories)[identifier] ?? []
      let cancelledInJournal = history.last.map(JournalAudit.isCancellation) ?? false
      #expect(cancelledInJournal == (outcomes[index]?.isCancelled ?? false), "task \(index)")
      if !plan.usesSpy {
        #expect(history.contains(.cancelled) == cancelledInJournal, "task \(index): \(history)")
      }
    }
  }

  @Test func threadsAndTasksDriveOneManualSpy() async throws {
    enum ManualPlan: Int, CaseIterable {
      /// Resumed by a thread, completed by a Swift task.
      case complete
      /// Resumed by a thread, then completed by one Swift task while another cancels it.
      case raceCompleteAndCancel
      /// Resumed, then cancelled by the thread; nobody completes it.
      case resumeThenCancel
      /// Cancelled, then resumed: never pending.
      case cancelThenResume
    }
    let workers = 6
    let perWorker = ManualPlan.allCases.count * 10
    let total = workers * perWorker
    let plans = (0..<total).map { ManualPlan.allCases[$0 % ManualPlan.allCases.count] }
    let spy = SpySession()
    let ledger = HandlerLedger(count: total)
    let identifiers = Shared([Int](repeating: 0, count: total))
    let completers = 4
    let accepted = Shared(0)
    let refused = Shared(0)
    let sent = plans.filter { $0 != .cancelThenResume }.count

    var continuations: [AsyncStream<(Int, MockTask)>.Continuation] = []
    var streams: [AsyncStream<(Int, MockTask)>] = []
    for _ in 0..<completers {
      let (stream, continuation) = AsyncStream<(Int, MockTask)>.makeStream()
      streams.append(stream)
      continuations.append(continuation)
    }
    let outlets = continuations
    let (cancelStream, cancelOutlet) = AsyncStream<MockTask>.makeStream()

    try await withThrowingTaskGroup(of: Void.self) { group in
      for waiter in 0..<8 {
        group.addTask { try await spy.waitForRequests(count: 1 + waiter * (sent - 1) / 7) }
      }
      for stream in streams {
        group.addTask {
          for await (index, task) in stream {
            let answer = StubResponse.text("done \(index)", status: 201)
            if plans[index] == .complete {
              if spy.complete(task, with: answer) { accepted.withLock { $0 += 1 } }
              continue
            }
            // Racing a cancel: the spy either takes the answer, reporting nothing, or refuses
            // with one report naming the task.
            var took = false
            let reports = capturedReports { took = spy.complete(task, with: answer) }
            let named = reports.filter {
              $0.message.contains("Cannot complete task #\(task.taskIdentifier) ")
            }
            #expect(
              reports.count == (took ? 0 : 1) && named.count == reports.count,
              "complete(t\(index)) returned \(took) with reports \(reports)")
            (took ? accepted : refused).withLock { $0 += 1 }
          }
        }
      }
      group.addTask {
        for await task in cancelStream { task.cancel() }
      }
      group.addTask {
        await runOnThreads(workers) { worker in
          for item in 0..<perWorker {
            let index = worker * perWorker + item
            let url = URL(string: "https://example.com/manual/\(index)")!
            let task = spy.dataTask(with: url, completionHandler: ledger.handler(index))
            identifiers.withLock { $0[index] = task.taskIdentifier }
            switch plans[index] {
            case .complete:
              task.resume()
              outlets[index % completers].yield((index, task))
            case .raceCompleteAndCancel:
              // Alternate which side hears of the task first.
              task.resume()
              if index.isMultiple(of: 2) { cancelOutlet.yield(task) }
              outlets[index % completers].yield((index, task))
              if !index.isMultiple(of: 2) { cancelOutlet.yield(task) }
            case .resumeThenCancel:
              task.resume()
              task.cancel()
            case .cancelThenResume:
              task.cancel()
              task.resume()
            }
          }
        }
        for outlet in outlets { outlet.finish() }
        cancelOutlet.finish()
      }
      try await group.waitForAll()
    }

    #expect(ledger.allCalls == Array(repeating: 1, count: total))
    #expect(spy.pendingTasks.isEmpty)
    #expect(spy.requests.count == sent)
    let outcomes = ledger.allOutcomes
    let racing = plans.filter { $0 == .raceCompleteAndCancel }.count
    #expect(accepted.current + refused.current == plans.filter { $0 == .complete }.count + racing)
    var answered = 0
    for (index, plan) in plans.enumerated() {
      let outcome = outcomes[index]
      let answer = DeliveredOutcome.success(status: 201, body: "done \(index)")
      switch plan {
      case .complete: #expect(outcome == answer)
      case .raceCompleteAndCancel:
        #expect(outcome == answer || outcome == .failure(.cancelled), "task \(index)")
      case .resumeThenCancel, .cancelThenResume: #expect(outcome == .failure(.cancelled))
      }
      if outcome == answer { answered += 1 }
    }
    // A completion the spy accepted is a delivered answer, and nothing else is.
    #expect(answered == accepted.current)
    let events = spy.events
    #expect(JournalAudit.problems(in: events, cancelMustWin: true) == [])
    #expect(occurrences(.created(.data), in: events) == total)
    #expect(occurrences(.resumed, in: events) == sent)
    let cancelled = outcomes.filter { $0?.isCancelled == true }.count
    #expect(occurrences(.cancelled, in: events) == cancelled)
  }

  @Test func asyncCallersAreCancelledWhileTheClockRuns() async throws {
    let count = 240
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/echo/{id}")) { _, parameters in
      StubResponse.text(parameters["id"] ?? "?").delayed(by: .seconds(1))
    }
    let spy = SpySession(wrapping: mock)
    let finished = Shared(0)
    let calls = (0..<count).map { index in
      Task { () -> DeliveredOutcome in
        defer { finished.withLock { $0 += 1 } }
        let url = URL(string: "https://example.com/echo/\(index)")!
        do {
          let (data, response) =
            index.isMultiple(of: 2) ? try await mock.data(from: url) : try await spy.data(from: url)
          return DeliveredOutcome(data: data, response: response, error: nil)
        } catch {
          return DeliveredOutcome(data: nil, response: nil, error: error)
        }
      }
    }
    let cancelled = Set((0..<count).filter { $0 % 3 == 1 })
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        await runOnThreads(3) { thread in
          for index in cancelled.sorted() where index % 3 == 1 && (index / 3) % 3 == thread {
            calls[index].cancel()
          }
        }
      }
      group.addTask {
        // Until every call has returned: each one either was cancelled or is answered once the
        // clock passes its deadline.
        while finished.current < count {
          await clock.advance(by: .seconds(1))
          await Task.yield()
        }
      }
      try await group.waitForAll()
    }

    var outcomes: [DeliveredOutcome] = []
    for call in calls { outcomes.append(await call.value) }
    for (index, outcome) in outcomes.enumerated() {
      if cancelled.contains(index) {
        #expect(
          outcome == .failure(.cancelled) || outcome == .success(status: 200, body: "\(index)"),
          "call \(index) got \(outcome)")
      } else {
        #expect(outcome == .success(status: 200, body: "\(index)"), "call \(index)")
      }
    }
    // Every call made one task on the mock (the spy's through its own), and each completed once.
    let mockEvents = mock.events
    #expect(occurrences(.created(.data), in: mockEvents) == count)
    #expect(JournalAudit.problems(in: mockEvents, cancelMustWin: true) == [])
    #expect(JournalAudit.problems(in: spy.events, cancelMustWin: false) == [])
    let answered = outcomes.filter { !$0.isCancelled }.count
    let completedWithAnswer = mockEvents.filter { JournalAudit.statusCode($0.kind) == 200 }.count
    #expect(completedWithAnswer == answered)
    #expect(mock.requests.count >= count - cancelled.count)
  }

  @Test func aCancelRacingTheClockWinsOrFindsTheTaskComplete() async throws {
    // The clock delivers tasks 0, 1, 2… while a thread cancels from a third of the way in; the
    // clock catches up with the thread and passes it, so that many cancels land while the
    // clock is delivering the same task. A cancel that began before the handler was taken must
    // win; one that came later finds the task complete and does nothing.
    let rounds = 30
    let perRound = 150
    for round in 0..<rounds {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      mock.stub(.get("/slow/{id}"), with: StubResponse.text("slow").delayed(by: .seconds(1)))
      let ledger = HandlerLedger(count: perRound)
      let tasks = (0..<perRound).map { index in
        mock.dataTask(
          with: URL(string: "https://example.com/slow/\(index)")!,
          completionHandler: ledger.handler(index))
      }
      for task in tasks { task.resume() }
      // The thread says it is ready, the clock's task says go, then both start at once.
      let go = Shared(false)
      let (ready, readySignal) = AsyncStream<Void>.makeStream()
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          await runOnThreads(1) { _ in
            readySignal.finish()
            while !go.current {}
            for task in tasks[(perRound / 3)...] { task.cancel() }
          }
        }
        group.addTask {
          for await _ in ready {}
          go.withLock { $0 = true }
          await clock.advance(by: .seconds(1))
        }
      }
      #expect(ledger.allCalls == Array(repeating: 1, count: perRound), "round \(round)")
      let problems = JournalAudit.problems(in: mock.events, cancelMustWin: true)
      #expect(problems == [], "round \(round)")
      for (index, task) in tasks.enumerated() {
        let cancelled = ledger.outcome(index)?.isCancelled == true
        #expect(task.state == .completed)
        #expect((task.error as? URLError)?.code == (cancelled ? .cancelled : nil))
        if index < perRound / 3 { #expect(!cancelled, "task \(index) was never cancelled") }
      }
      if !problems.isEmpty { return }
    }
  }

  @Test func waitersAndSleepersFromManyTasksAreAllReleased() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(204).delayed(by: .milliseconds(10)))
    let sleepers = 24
    let requests = 64
    let ledger = HandlerLedger(count: requests)
    let woke = Shared(0)

    try await withThrowingTaskGroup(of: Void.self) { group in
      for waiter in 0..<32 {
        group.addTask { try await mock.waitForRequests(count: 1 + waiter * (requests - 1) / 31) }
      }
      for waiter in 0..<8 {
        group.addTask { try await clock.waitForSleepers(count: 1 + waiter * (sleepers - 1) / 7) }
      }
      for sleeper in 0..<sleepers {
        group.addTask {
          try await clock.sleep(for: .milliseconds(100 * (1 + sleeper % 6)))
          woke.withLock { $0 += 1 }
        }
      }
      group.addTask {
        await runOnThreads(4) { thread in
          for index in stride(from: thread, to: requests, by: 4) {
            mock.dataTask(
              with: URL(string: "https://example.com/r/\(index)")!,
              completionHandler: ledger.handler(index)
            ).resume()
          }
        }
      }
      group.addTask {
        // Several tasks move the clock to different targets at once, once everyone is asleep
        // and every request is on the clock.
        try await clock.waitForSleepers(count: sleepers)
        try await mock.waitForRequests(count: requests)
        await withTaskGroup(of: Void.self) { advancers in
          for target in [150, 300, 450, 600] {
            advancers.addTask { await clock.advance(to: .init(offset: .milliseconds(target))) }
          }
        }
      }
      try await group.waitForAll()
    }

    #expect(woke.current == sleepers)
    #expect(ledger.allCalls == Array(repeating: 1, count: requests))
    #expect(ledger.allOutcomes.allSatisfy { $0 == .success(status: 204, body: "") })
    #expect(clock.now == .init(offset: .milliseconds(600)))
    #expect(clock.pendingCount == 0)
    #expect(mock.requests.count == requests)
  }

  @Test func threadsShareOneMockThroughAnInterceptedURLSession() async throws {
    let threads = 4
    let perThread = 60
    let total = threads * perThread
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/now/{id}")) { _, parameters in .text(parameters["id"] ?? "?") }
    mock.stub(.get("/later/{id}")) { _, parameters in
      StubResponse.text(parameters["id"] ?? "?").delayed(by: .seconds(1))
    }
    let session = mock.makeURLSession()
    let ledger = HandlerLedger(count: total)
    // Every third request is delayed, and every second delayed one is cancelled by its thread.
    @Sendable func isDelayed(_ index: Int) -> Bool { index % 3 == 0 }
    @Sendable func isCancelled(_ index: Int) -> Bool { index % 6 == 0 }
    await runOnThreads(threads) { thread in
      for index in stride(from: thread, to: total, by: threads) {
        let path = isDelayed(index) ? "later" : "now"
        let task = session.dataTask(
          with: URL(string: "https://x.test/\(path)/\(index)")!,
          completionHandler: ledger.handler(index))
        task.resume()
        if isCancelled(index) { task.cancel() }
      }
    }
    while ledger.allCalls.contains(0) {
      await clock.advance(by: .seconds(1))
      await Task.yield()
    }
    #expect(ledger.allCalls == Array(repeating: 1, count: total))
    for index in 0..<total {
      let outcome = ledger.outcome(index)
      if isCancelled(index) {
        #expect(
          outcome == .failure(.cancelled) || outcome == .success(status: 200, body: "\(index)"),
          "request \(index) got \(String(describing: outcome))")
      } else {
        #expect(outcome == .success(status: 200, body: "\(index)"), "request \(index)")
      }
    }
    let events = mock.events
    #expect(JournalAudit.problems(in: events, cancelMustWin: false) == [])
    #expect(mock.requests.count <= total)
    #expect(mock.requests.count >= total - (0..<total).filter(isCancelled).count)
    #expect(mock.exchanges.allSatisfy { $0.door == .urlProtocol })
  }

  private func occurrences(_ kind: SessionEvent.Kind, in events: [SessionEvent]) -> Int {
    events.filter { $0.kind == kind }.count
  }
}
