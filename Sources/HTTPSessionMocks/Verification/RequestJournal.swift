import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Everything a double saw: the requests it sent, the life of every task, the requests no stub
/// answered, and the queries and verifications over them.
///
/// ``URLSessionMock`` and ``SpySession`` each own one, and expose its queries through
/// ``RecordingSession``, so `mock.verify(...)` and `spy.verify(...)` are the same code.
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
  public var requests: [URLRequest] { core.withLock { $0.records.requests } }

  /// The whole call log: every task's creation, resume, cancellation and completion.
  public var events: [SessionEvent] { core.withLock { $0.records.events } }

  /// What answered each request, in the order the answers arrived: the response head, the
  /// body, the stub and the door.
  public var exchanges: [Exchange] { core.withLock { $0.records.exchanges } }

  /// The requests that no stub answered (always empty for a ``SpySession``).
  public var unmatchedRequests: [URLRequest] { core.withLock { $0.records.unmatched } }

  /// The sent requests that `matcher` accepts, in order.
  public func requests(matching matcher: RequestMatcher) -> [URLRequest] {
    requests.filter(matcher.matches)
  }

  // MARK: Verification

  /// Checks that `count` sent requests match `matcher`, and reports a failure if not.
  @discardableResult
  public func verify(
    _ matcher: RequestMatcher, called count: CallCount = .once, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let (all, redaction) = core.withLock { ($0.records.requests, $0.reportRedaction) }
    if let problem = invalidMatcherMessage(matcher) {
      reporter.fail(problem, at: site)
      return false
    }
    let matching = all.filter(matcher.matches)
    if count.accepts(matching.count) { return true }
    let expectation = count == .never ? "never to be called" : "to be called \(count)"
    var message =
      "Expected \(matcher.description(redacting: redaction)) \(expectation), but it was called "
      + "\(CallCount.times(matching.count)).\n"
    message += NearMiss.requestReport(all, against: matcher, redaction)
    reporter.fail(message, at: site)
    return false
  }

  /// Checks that requests matching `matchers` were sent in that relative order (other requests
  /// may come between them), and reports a failure if not.
  @discardableResult
  public func verifyInOrder(
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
    let (all, redaction) = core.withLock { ($0.records.requests, $0.reportRedaction) }
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
        message += ".\nSent requests:\n"
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
  public func verifyAllTasksResumed(
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
  public func verifyNoUnmatchedRequests(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    let (unmatched, redaction) = core.withLock { ($0.records.unmatched, $0.reportRedaction) }
    guard !unmatched.isEmpty else { return true }
    let message =
      "\(unmatched.count) request(s) matched no stub:\n"
      + NearMiss.numberedList(unmatched, redaction)
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
  public func waitForRequests(
    count: Int, timeout: Duration = .seconds(5), fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) async throws {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let reporter = reporter
    let core = core
    try await RealTimeWait.run(
      timeout: timeout,
      register: { id, continuation in
        core.withLock { state in
          if state.settledCount >= count { return true }
          state.waiters[id] = SessionCore.Waiter(count: count, continuation: continuation)
          return false
        }
      },
      unregister: { id in
        core.withLock { $0.waiters.removeValue(forKey: id)?.continuation }
      },
      timedOut: {
        let (sent, redaction) = core.withLock { ($0.records.requests, $0.reportRedaction) }
        var message =
          "Expected \(count) request(s), but \(sent.count) were sent after waiting \(timeout) "
          + "of real time. Did the code under test issue its request, and resume its task?\n"
        if !sent.isEmpty {
          message += "Sent requests:\n" + NearMiss.numberedList(sent, redaction)
        }
        reporter.fail(message, at: site)
        return WaitTimeoutError(wait: "waitForRequests(count: \(count))", message: message)
      })
  }

  private func invalidMatcherMessage(_ matcher: RequestMatcher) -> String? {
    let problems = matcher.problems
    guard !problems.isEmpty else { return nil }
    return "The matcher \(matcher.description(redacting: core.reportRedaction)) can never "
      + "match: " + problems.joined(separator: " ")
  }
}
