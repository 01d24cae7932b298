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
  private struct Waiter {
    var count: Int
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var events: [SessionEvent] = []
    var requests: [URLRequest] = []
    var unmatched: [URLRequest] = []
    /// Tasks created and not yet resumed or cancelled, by task identifier.
    var unresumed: [Int: (request: URLRequest, site: String)] = [:]
    var nextTaskIdentifier = 0
    var waiters: [ObjectIdentifier: Waiter] = [:]
  }

  private let state = Locked(State())
  let reporter: FailureReporter

  init(reporter: FailureReporter) {
    self.reporter = reporter
  }

  // MARK: Recording

  func recordCreated(_ request: URLRequest, kind: SessionEvent.TaskKind) -> Int {
    state.withLock { state in
      state.nextTaskIdentifier += 1
      let id = state.nextTaskIdentifier
      state.events.append(SessionEvent(kind: .created(kind), taskIdentifier: id, request: request))
      state.unresumed[id] = (request, kind.rawValue)
      return id
    }
  }

  /// Records a resumed task's request, and returns the `waitForRequests` calls it satisfies.
  ///
  /// The caller resumes them once the double has handled the task (scheduled its answer, held
  /// it as pending), so that a test that wakes up can act on it at once.
  func recordResumed(_ request: URLRequest, taskIdentifier: Int)
    -> [CheckedContinuation<Void, any Error>]
  {
    state.withLock { state -> [CheckedContinuation<Void, any Error>] in
      state.events.append(
        SessionEvent(kind: .resumed, taskIdentifier: taskIdentifier, request: request))
      state.requests.append(request)
      state.unresumed[taskIdentifier] = nil
      guard !state.waiters.isEmpty else { return [] }
      let count = state.requests.count
      let met = state.waiters.filter { $0.value.count <= count }
      for key in met.keys { state.waiters[key] = nil }
      return met.values.map(\.continuation)
    }
  }

  func recordCancelled(_ request: URLRequest, taskIdentifier: Int) {
    state.withLock { state in
      state.events.append(
        SessionEvent(kind: .cancelled, taskIdentifier: taskIdentifier, request: request))
      state.unresumed[taskIdentifier] = nil
    }
  }

  func recordCompleted(
    _ request: URLRequest, taskIdentifier: Int, response: URLResponse?, error: (any Error)?
  ) {
    let kind = SessionEvent.Kind.completed(
      statusCode: (response as? HTTPURLResponse)?.statusCode,
      error: error.map { String(describing: $0) })
    state.withLock { state in
      state.events.append(
        SessionEvent(kind: kind, taskIdentifier: taskIdentifier, request: request))
    }
  }

  func recordUnmatched(_ request: URLRequest) {
    state.withLock { $0.unmatched.append(request) }
  }

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
    var message =
      "Expected \(matcher) to be called \(count), but it was called "
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
        let earlier = all[..<position].indices.filter { matcher.matches(all[$0]) }
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
    let forgotten = state.withLock { $0.unresumed }.sorted { $0.key < $1.key }
    guard !forgotten.isEmpty else { return true }
    var message =
      "\(forgotten.count) task(s) were created but never resumed, so their requests were never "
      + "sent. Did the code under test forget to call resume()?\n"
    for (id, entry) in forgotten {
      message += "  #\(id) \(entry.site) task \(entry.request.summary)\n"
    }
    reporter.fail(
      message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
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
          if state.requests.count >= count { return true }
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
        return WaitTimeoutError(message: message)
      })
  }

  private func invalidMatcherMessage(_ matcher: RequestMatcher) -> String? {
    let problems = matcher.problems
    guard !problems.isEmpty else { return nil }
    return "The matcher \(matcher) can never match: " + problems.joined(separator: " ")
  }
}
