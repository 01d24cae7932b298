import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Everything a double saw: the requests it sent, the life of every task, the requests no stub
/// answered. Read it through the double: ``RecordingSession`` has its queries and verifications.
///
/// ``URLSessionMock`` and ``SpySession`` each own one, so `mock.verify(...)` and
/// `spy.verify(...)` are the same code. The journal has no public members of its own: it is
/// public only because ``RecordingSession`` requires one (``RecordingSession/journal``), and
/// only this package creates journals, so every ``RecordingSession`` records the same way.
///
/// A journal keeps everything, except the journal of a mock that a loopback server serves
/// (`startServer`, the `stub-server` command), which runs for as long as its clients do: it
/// keeps the newest `ServerLimits.maxJournalExchanges` requests, exchanges and unmatched
/// requests (10,000 by default) and four times as many events, and cuts request and response
/// bodies longer than `ServerLimits.maxJournalBodyBytes` (1 MiB) to that prefix (an
/// ``Exchange`` keeps their full sizes). The queries return what is kept;
/// ``RecordingSession/waitForRequests(count:timeout:fileID:filePath:line:column:)`` and the
/// count in ``RecordingSession/verifyNoUnmatchedRequests(fileID:filePath:line:column:)`` go on
/// counting every request; ``RecordingSession/verify(_:called:fileID:filePath:line:column:)``
/// passes only when the dropped requests cannot change its verdict, and otherwise reports that
/// it cannot tell.
public final class RequestJournal: Sendable {
  /// The double's core, whose records this journal reads.
  let core: SessionCore

  init(core: SessionCore) {
    self.core = core
  }

  var reporter: FailureReporter { core.reporter }

  /// Unmatched requests that were answered by a policy and not reported as failures.
  var unreportedUnmatchedRequests: [URLRequest] {
    core.withLock { $0.records.unreportedUnmatched }
  }

  // MARK: Queries

  /// The requests sent, in the order their tasks were resumed, bodies included.
  var requests: [URLRequest] { core.withLock { $0.records.requests } }

  /// The whole call log: every task's creation, resume, cancellation and completion.
  var events: [SessionEvent] { core.withLock { $0.records.events } }

  /// What answered each request, in the order the answers arrived: the response head, the
  /// body, the stub and the door.
  var exchanges: [Exchange] { core.withLock { $0.records.exchanges } }

  /// The requests that no stub answered (always empty for a ``SpySession``).
  var unmatchedRequests: [URLRequest] { core.withLock { $0.records.unmatched } }

  /// The sent requests that `matcher` accepts, in order.
  func requests(matching matcher: RequestMatcher) -> [URLRequest] {
    requests.filter(matcher.matches)
  }

  // MARK: Verification

  /// Checks that `count` sent requests match `matcher`, and reports a failure if not.
  ///
  /// A journal that keeps everything (every mock's, until a loopback server serves it) counts
  /// every request. The journal of a served mock keeps only the newest
  /// `ServerLimits.maxJournalExchanges` requests: the requests it dropped may have matched, so
  /// the true count lies between the kept matches and those plus the dropped requests. The
  /// verification passes only when every count in that range is accepted; when some are and
  /// some are not, it reports that it cannot tell, with the numbers.
  @discardableResult
  func verify(
    _ matcher: RequestMatcher, called count: CallCount = .once, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let (all, window, redaction) = keptRequests
    if let problem = invalidMatcherMessage(matcher) {
      reporter.fail(problem, at: site)
      return false
    }
    let matching = all.filter(matcher.matches).count
    let dropped = window?.dropped ?? 0
    // The true count, given that every dropped request may or may not have matched.
    let (most, overflow) = matching.addingReportingOverflow(dropped)
    let possible = matching...(overflow ? Int.max : most)
    if count.range.contains(possible.lowerBound), count.range.contains(possible.upperBound) {
      return true
    }
    let expectation = count == .never ? "never to be called" : "to be called \(count)"
    if let window, count.range.overlaps(possible) {
      reporter.fail(
        "Cannot tell whether \(matcher.description(redacting: redaction)) was called \(count): \(window.explanation), and "
          + "\(matching) of the kept ones match, so it was called between \(matching) and "
          + "\(possible.upperBound) times. Verify before the journal fills, or start the "
          + "server with a larger ServerLimits.maxJournalExchanges.", at: site)
      return false
    }
    var message =
      "Expected \(matcher.description(redacting: redaction)) \(expectation), but it was called "
      + "\(window == nil ? CallCount.times(matching) : "at least \(CallCount.times(matching))")"
      + ".\n"
    if let window { message += "(\(window.explanation).)\n" }
    message += NearMiss.requestReport(all, against: matcher, redaction)
    reporter.fail(message, at: site)
    return false
  }

  /// What a bounded journal dropped, for reports: `nil` while it has dropped nothing.
  struct DroppedWindow {
    let kept: Int
    let dropped: Int

    /// `the journal keeps only the newest 10000 requests (ServerLimits...) and dropped 5 older`.
    var explanation: String {
      "the journal of this served mock keeps only the newest \(kept) requests "
        + "(ServerLimits.maxJournalExchanges) and has dropped \(dropped) older ones"
    }
  }

  /// The kept requests, and what the journal dropped before them, in one critical region.
  private var keptRequests: ([URLRequest], DroppedWindow?, ReportRedaction) {
    core.withLock { state in
      let records = state.records
      let dropped = records.droppedRequestCount
      let window = dropped > 0 ? DroppedWindow(kept: records.limit ?? 0, dropped: dropped) : nil
      return (records.requests, window, state.reportRedaction)
    }
  }

  /// Checks that requests matching `matchers` were sent in that relative order (other requests
  /// may come between them), and reports a failure if not.
  ///
  /// A served mock's journal keeps only its newest requests (`ServerLimits.maxJournalExchanges`):
  /// the order is checked among those, and a failure says how many older ones were dropped.
  @discardableResult
  func verifyInOrder(
    _ matchers: [RequestMatcher], fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    for matcher in matchers {
      if let problem = invalidMatcherMessage(matcher) {
        reporter.fail(problem, at: site)
        return false
      }
    }
    let (all, window, redaction) = keptRequests
    var position = 0
    var found: [Int] = []
    for (step, matcher) in matchers.enumerated() {
      guard let index = all[position...].firstIndex(where: matcher.matches) else {
        var message = "Expected requests in this order:\n"
        for (number, expected) in matchers.enumerated() {
          message += "  \(number + 1). \(expected.description(redacting: redaction))\n"
        }
        let described = matcher.description(redacting: redaction)
        if step == 0 {
          message += "but no request matched \(described)"
        } else {
          message +=
            "Step \(step) matched request \(found[step - 1] + 1), but no later request matched "
            + "step \(step + 1), \(described)"
        }
        // Requests an earlier step already used did not come too early: they were used.
        let earlier = all[..<position].indices.filter {
          !found.contains($0) && matcher.matches(all[$0])
        }
        if !earlier.isEmpty {
          let numbers = earlier.map { String($0 + 1) }.joined(separator: ", ")
          message += " (it matches request \(numbers), which came too early)"
        }
        message += ".\n"
        if let window { message += "(\(window.explanation).)\n" }
        message += "Sent requests:\n"
        message += NearMiss.numberedList(all, redaction)
        reporter.fail(message, at: site)
        return false
      }
      found.append(index)
      position = index + 1
    }
    return true
  }

  /// Checks that every task that was created was also resumed (or cancelled), and reports each
  /// forgotten `resume()`.
  @discardableResult
  func verifyAllTasksResumed(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    guard let message = unresumedTasksMessage() else { return true }
    reporter.fail(
      message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
  }

  /// The report of tasks that were created and neither resumed nor cancelled, or `nil`.
  func unresumedTasksMessage() -> String? {
    let forgotten = Self.unresumedTasks(in: events)
    guard !forgotten.isEmpty else { return nil }
    var message =
      "\(forgotten.count) task(s) were created but never resumed, so their requests were never "
      + "sent. Did the code under test forget to call resume()?\n"
    for event in forgotten {
      message += "  \(event)\n"
    }
    return message
  }

  /// Checks that every request was answered by a stub, and reports those that were not.
  @discardableResult
  func verifyNoUnmatchedRequests(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    let (unmatched, total, redaction) = core.withLock {
      ($0.records.unmatched, $0.records.unmatchedCount, $0.reportRedaction)
    }
    guard total > 0 else { return true }
    var message = "\(total) request(s) matched no stub"
    if total > unmatched.count {
      message += " (the journal of this served mock kept the newest \(unmatched.count))"
    }
    message += ":\n" + NearMiss.numberedList(unmatched, redaction)
    reporter.fail(
      message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
  }

  /// The creation events of tasks that were neither resumed nor cancelled.
  static func unresumedTasks(in events: [SessionEvent]) -> [SessionEvent] {
    var started = Set<Int>()
    for event in events {
      switch event.kind {
      case .resumed, .cancelled: started.insert(event.taskIdentifier)
      default: continue
      }
    }
    return events.filter { event in
      if case .created = event.kind { return !started.contains(event.taskIdentifier) }
      return false
    }
  }

  // MARK: Waiting

  /// Suspends until at least `count` requests have been sent.
  ///
  /// It counts every request since the double was made, also those that the bounded journal
  /// of a served mock no longer keeps (`ServerLimits.maxJournalExchanges`).
  func waitForRequests(
    count: Int, timeout: Duration = .seconds(5), fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) async throws {
    try await wait(
      until: .settled, reaches: count, timeout: timeout, named: "waitForRequests(count: \(count))",
      at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column),
      snapshot: { ($0.records.requests, $0.records.sentCount, $0.reportRedaction) },
      explain: { sent, total, redaction in
        var message =
          "Expected \(count) request(s), but \(total) were sent after waiting \(timeout) "
          + "of real time. Did the code under test issue its request, and resume its task?\n"
        if !sent.isEmpty {
          message += "Sent requests:\n" + NearMiss.numberedList(sent, redaction)
        }
        return message
      })
  }

  /// Suspends until at least `count` exchanges have ended (completed, failed or cancelled).
  ///
  /// It counts every exchange since the double was made, also those that the bounded journal
  /// of a served mock no longer keeps.
  func waitForExchanges(
    count: Int, timeout: Duration = .seconds(5), fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) async throws {
    try await wait(
      until: .ended, reaches: count, timeout: timeout, named: "waitForExchanges(count: \(count))",
      at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column),
      snapshot: { state in
        let finished = Set(state.records.exchanges.map(\.taskIdentifier))
        let open = state.records.events.compactMap { event -> URLRequest? in
          guard case .resumed = event.kind, !finished.contains(event.taskIdentifier)
          else { return nil }
          return event.request
        }
        return (state.endedCount, state.records.sentCount, open, state.reportRedaction)
      },
      explain: { ended, sent, open, redaction in
        var message =
          "Expected \(count) exchange(s) to end, but \(ended) of \(sent) sent request(s) had "
          + "ended after waiting \(timeout) of real time. A streamed answer ends when its last "
          + "piece is released on the mock's clock (advance the clock), when it fails or drops, "
          + "or when the client leaves (cancels its task, closes its connection).\n"
        if !open.isEmpty {
          message += "Still open:\n" + NearMiss.numberedList(open, redaction)
        }
        return message
      })
  }

  /// Waits until `count` sent requests have settled; when `timeout` of real time passes first,
  /// throws what `timedOut` makes (and reports, if it does), and cancelling the waiting task
  /// throws `CancellationError`.
  func waitForSettled(
    count: Int, timeout: Duration, timedOut: @escaping @Sendable () -> any Error
  ) async throws {
    try await wait(until: .settled, reaches: count, timeout: timeout, timedOut: timedOut)
  }

  /// Waits like ``wait(until:reaches:timeout:timedOut:)``; on a timeout, reports at `site`
  /// what `explain` makes of the state `snapshot` took under the lock (formatted after it is
  /// left), and throws it as a ``WaitTimeoutError`` of the wait `named`.
  private func wait<Snapshot>(
    until counted: WaitedCount, reaches count: Int, timeout: Duration, named name: String,
    at site: CallSite,
    snapshot: @escaping @Sendable (SessionCore.State) -> Snapshot,
    explain: @escaping @Sendable (Snapshot) -> String
  ) async throws {
    let reporter = reporter
    let core = core
    try await wait(
      until: counted, reaches: count, timeout: timeout,
      timedOut: {
        let message = explain(core.withLock { snapshot($0) })
        reporter.fail(message, at: site)
        return WaitTimeoutError(wait: name, message: message)
      })
  }

  /// Waits until the core's count `counted` reaches `count`: the one real-time wait behind
  /// `waitForSettled` and `waitForExchanges`.
  private func wait(
    until counted: WaitedCount, reaches count: Int, timeout: Duration,
    timedOut: @escaping @Sendable () -> any Error
  ) async throws {
    let core = core
    try await RealTimeWait.run(
      timeout: timeout,
      register: { id, continuation in
        core.withLock { state in
          if state.count(counted) >= count { return true }
          state.setWaiter(
            SessionCore.Waiter(count: count, continuation: continuation), for: id, counted)
          return false
        }
      },
      unregister: { id in
        core.withLock { $0.setWaiter(nil, for: id, counted)?.continuation }
      },
      timedOut: timedOut)
  }

  private func invalidMatcherMessage(_ matcher: RequestMatcher) -> String? {
    let problems = matcher.problems
    guard !problems.isEmpty else { return nil }
    return "The matcher \(matcher.description(redacting: core.reportRedaction)) can never "
      + "match: " + problems.joined(separator: " ")
  }
}

/// The counts of a core that a test may wait on in real time.
private enum WaitedCount {
  /// Sent requests whose answer is scheduled (`waitForRequests`).
  case settled
  /// Exchanges that have ended (`waitForExchanges`).
  case ended
}

extension SessionCore.State {
  fileprivate func count(_ counted: WaitedCount) -> Int {
    switch counted {
    case .settled: settledCount
    case .ended: endedCount
    }
  }

  /// Sets (or, with `nil`, removes) the waiter `id` on `counted`; returns the one it replaces.
  @discardableResult
  fileprivate mutating func setWaiter(
    _ waiter: SessionCore.Waiter?, for id: ObjectIdentifier, _ counted: WaitedCount
  ) -> SessionCore.Waiter? {
    switch counted {
    case .settled:
      defer { waiters[id] = waiter }
      return waiters[id]
    case .ended:
      defer { endWaiters[id] = waiter }
      return endWaiters[id]
    }
  }
}
