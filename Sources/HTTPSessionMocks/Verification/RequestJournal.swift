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
  struct Waiter {
    var count: Int
    var continuation: CheckedContinuation<Void, any Error>
  }

  /// The journal's records. The same lock also guards the mutable fields of the journal's
  /// tasks, so that a task's transition and its record are one critical region.
  struct State {
    var events: [SessionEvent] = []
    var requests: [URLRequest] = []
    var unmatched: [URLRequest] = []
    /// Unmatched requests that nothing has reported as a failure yet (answered by a policy).
    var unreportedUnmatched: [URLRequest] = []
    var nextTaskIdentifier = 0
    /// Sent requests whose answer the double has scheduled (or delivered, or held):
    /// `waitForRequests` counts these, so a test that wakes can act on the answer at once.
    var settledCount = 0
    var waiters: [ObjectIdentifier: Waiter] = [:]
    /// Whether the mock has warned that its delays take real time (it does so once).
    var warnedAboutRealTimeDelay = false
    /// A mock's stubs and their use (empty for a spy): under the same lock as the records.
    var routing = StubRouter.State()

    mutating func recordCreated(_ request: URLRequest, kind: SessionEvent.TaskKind) -> Int {
      nextTaskIdentifier += 1
      events.append(
        SessionEvent(kind: .created(kind), taskIdentifier: nextTaskIdentifier, request: request))
      return nextTaskIdentifier
    }

    /// Records a sent request. Its waiters are woken by ``settleResumed()``, once the double
    /// has scheduled the answer.
    mutating func recordResumed(_ request: URLRequest, taskIdentifier: Int) {
      events.append(SessionEvent(kind: .resumed, taskIdentifier: taskIdentifier, request: request))
      requests.append(request)
    }

    /// Counts one sent request as settled (its answer scheduled, delivered or held); returns the
    /// waiters that this satisfies, to resume outside the lock.
    mutating func settleResumed() -> [CheckedContinuation<Void, any Error>] {
      settledCount += 1
      guard !waiters.isEmpty else { return [] }
      let count = settledCount
      let met = waiters.filter { $0.value.count <= count }
      for key in met.keys { waiters[key] = nil }
      return met.values.map(\.continuation)
    }

    mutating func recordCancelled(_ request: URLRequest, taskIdentifier: Int) {
      events.append(
        SessionEvent(kind: .cancelled, taskIdentifier: taskIdentifier, request: request))
    }

    mutating func recordCompleted(
      _ request: URLRequest, taskIdentifier: Int, response: URLResponse?, error: (any Error)?
    ) {
      let kind = SessionEvent.Kind.completed(
        statusCode: (response as? HTTPURLResponse)?.statusCode,
        error: error.map(ErrorText.describe))
      events.append(SessionEvent(kind: kind, taskIdentifier: taskIdentifier, request: request))
    }
  }

  private let state = Locked(State())
  let reporter: FailureReporter
  /// The kind of double that owns this journal, for messages: `URLSessionMock`, `SpySession`.
  let ownerName: String
  /// Where the owner was created.
  let ownerSite: CallSite

  init(ownerName: String, ownerSite: CallSite) {
    self.reporter = FailureReporter()
    self.ownerName = ownerName
    self.ownerSite = ownerSite
  }

  // MARK: Recording

  /// Runs `body` under the journal's lock, which also guards the journal's tasks.
  func withLock<Result>(_ body: (inout State) -> Result) -> Result {
    state.withLock(body)
  }

  func recordUnmatched(_ request: URLRequest, reported: Bool) {
    state.withLock { state in
      state.unmatched.append(request)
      if !reported { state.unreportedUnmatched.append(request) }
    }
  }

  /// Unmatched requests that were answered by a policy and not reported as failures.
  var unreportedUnmatchedRequests: [URLRequest] { state.withLock { $0.unreportedUnmatched } }

  // MARK: Queries

  /// The requests sent, in the order their tasks were resumed, bodies included.
  public var requests: [URLRequest] { state.withLock { $0.requests } }

  /// The whole call log: every task's creation, resume, cancellation and completion.
  public var events: [SessionEvent] { state.withLock { $0.events } }

  /// The requests that no stub answered (always empty for a ``SpySession``).
  public var unmatchedRequests: [URLRequest] { state.withLock { $0.unmatched } }

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
    let all = requests
    if let problem = invalidMatcherMessage(matcher) {
      reporter.fail(problem, at: site)
      return false
    }
    let matching = all.filter(matcher.matches)
    if count.accepts(matching.count) { return true }
    let expectation = count == .never ? "never to be called" : "to be called \(count)"
    var message =
      "Expected \(matcher) \(expectation), but it was called "
      + "\(CallCount.times(matching.count)).\n"
    message += NearMiss.requestReport(all, against: matcher)
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
    let all = requests
    var position = 0
    var found: [Int] = []
    for (step, matcher) in matchers.enumerated() {
      guard let index = all[position...].firstIndex(where: matcher.matches) else {
        var message = "Expected requests in this order:\n"
        for (number, expected) in matchers.enumerated() {
          message += "  \(number + 1). \(expected)\n"
        }
        if step == 0 {
          message += "but no request matched \(matcher)"
        } else {
          message +=
            "Step \(step) matched request \(found[step - 1] + 1), but no later request matched "
            + "step \(step + 1), \(matcher)"
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
        message += NearMiss.numberedList(all)
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
    let unmatched = unmatchedRequests
    guard !unmatched.isEmpty else { return true }
    let message =
      "\(unmatched.count) request(s) matched no stub:\n" + NearMiss.numberedList(unmatched)
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
    try await RealTimeWait.run(
      timeout: timeout,
      register: { id, continuation in
        state.withLock { state in
          if state.settledCount >= count { return true }
          state.waiters[id] = Waiter(count: count, continuation: continuation)
          return false
        }
      },
      unregister: { [state] id in
        state.withLock { $0.waiters.removeValue(forKey: id)?.continuation }
      },
      timedOut: { [state] in
        let sent = state.withLock { $0.requests }
        var message =
          "Expected \(count) request(s), but \(sent.count) were sent after waiting \(timeout) "
          + "of real time. Did the code under test issue its request, and resume its task?\n"
        if !sent.isEmpty { message += "Sent requests:\n" + NearMiss.numberedList(sent) }
        reporter.fail(message, at: site)
        return WaitTimeoutError(wait: "waitForRequests(count: \(count))", message: message)
      })
  }

  private func invalidMatcherMessage(_ matcher: RequestMatcher) -> String? {
    let problems = matcher.problems
    guard !problems.isEmpty else { return nil }
    return "The matcher \(matcher) can never match: " + problems.joined(separator: " ")
  }
}
