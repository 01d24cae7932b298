import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` that records every call, and either forwards it to another session or
/// holds it until the test answers.
///
/// `SpySession(wrapping:)` passes every task to the session it wraps (a real `URLSession`, a
/// ``URLSessionMock``, anything) and never changes what that session answers. `SpySession()`
/// holds every resumed task in ``pendingTasks`` until the test completes it, in any order: this
/// is how a test drives loading states, races and out-of-order answers.
///
/// ```swift
/// let spy = SpySession()
/// client.session = spy
/// ...  // the code under test sends two searches
/// spy.complete(spy.pendingTasks[1], with: .json(["ab"]))  // the later search answers first
/// spy.complete(spy.pendingTasks[0], with: .json(["a"]))
/// ```
///
/// A spy records and verifies as a mock does (``RecordingSession``). See "Answer in the order the
/// test chooses" in <doc:XCTestAndSwiftTesting>.
public final class SpySession: RecordingSession, Sendable {
  /// The task data tasks are: a ``MockTask``.
  public typealias DataTask = MockTask
  /// The task upload tasks are: a ``MockTask``.
  public typealias UploadTask = MockTask
  /// The task download tasks are: a ``MockTask``.
  public typealias DownloadTask = MockTask

  /// The record that ``RecordingSession``'s queries read: `requests`, `verify(_:called:)`, ...
  public let journal: RequestJournal
  /// The session calls are forwarded to, or `nil` in manual mode.
  public let wrapped: (any HTTPSession)?
  /// Manual mode: resumed tasks waiting for the test, in resume order.
  private let held = HeldTasks()
  let core: SessionCore
  var site: CallSite { core.ownerSite }

  /// Creates a spy that forwards every call to `session` and records it.
  public init(
    wrapping session: some HTTPSession, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.wrapped = session
    self.core = SessionCore(
      answering: .forward(session), ownerName: "SpySession",
      ownerSite: CallSite(fileID: fileID, filePath: filePath, line: line, column: column),
      clock: nil)
    self.journal = RequestJournal(core: core)
    MockVerificationScope.current?.register(self)
  }

  /// Creates a spy in manual mode: resumed tasks wait in ``pendingTasks`` until the test
  /// completes them with ``complete(_:with:fileID:filePath:line:column:)``.
  public init(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) {
    self.wrapped = nil
    self.core = SessionCore(
      answering: .hold(WeakReference(held)), ownerName: "SpySession",
      ownerSite: CallSite(fileID: fileID, filePath: filePath, line: line, column: column),
      clock: nil)
    self.journal = RequestJournal(core: core)
    MockVerificationScope.current?.register(self)
  }

  // MARK: - Manual mode

  /// Manual mode: the tasks that were resumed and not yet completed or cancelled, in resume
  /// order. Always empty when forwarding.
  public var pendingTasks: [MockTask] { held.all }

  /// Manual mode: the pending tasks whose request `matcher` accepts, in resume order.
  ///
  /// Requests sent from different Swift tasks reach the spy in whichever order those tasks run;
  /// pick a pending task by what it asks for, not by its position:
  ///
  /// ```swift
  /// try await spy.waitForRequests(count: 2)
  /// let hubot = try #require(spy.pendingTasks(matching: .get("/users/hubot")).first)
  /// spy.complete(hubot, with: .status(500))
  /// ```
  public func pendingTasks(matching matcher: RequestMatcher) -> [MockTask] {
    pendingTasks.filter { matcher.matches($0.originalRequest) }
  }

  /// Completes a pending task with this answer; with no error and no response, the answer is
  /// status 200 for the request's URL.
  ///
  /// The same as ``complete(_:with:fileID:filePath:line:column:)`` with
  /// `StubResponse(data:response:error:)`, which it calls: write that instead.
  @available(
    *, deprecated,
    message:
      "Use complete(_:with:) with StubResponse(data:response:error:), or with a response such as .data(_:), .status(_:) or .error(_:)"
  )
  @discardableResult
  public func complete(
    _ task: MockTask, data: Data?, response: URLResponse?, error: (any Error)?,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    complete(
      task, with: StubResponse(data: data, response: response, error: error), fileID: fileID,
      filePath: filePath, line: line, column: column)
  }

  /// Completes a pending task with a ``StubResponse`` (its delay, if any, is ignored: the test
  /// decides when).
  ///
  /// `StubResponse(data:response:error:)` gives the answer as is, in DHURLSessionStub's form:
  /// with no error and no response, the answer is status 200 for the request's URL.
  ///
  /// Reports a failure and returns `false` if the task is not pending (never resumed, already
  /// completed or cancelled, or not this spy's).
  @discardableResult
  public func complete(
    _ task: MockTask, with response: StubResponse, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    let callSite = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    guard held.take(task) else {
      let why: String
      if let wrapped {
        why =
          "this spy forwards to \(type(of: wrapped)); only a spy made with SpySession() holds "
          + "tasks for the test to complete"
      } else if task.core !== core {
        why = "it was made by another session; complete it on the SpySession that made it"
      } else {
        switch task.state {
        case .suspended: why = "it was never resumed, so the spy does not hold it yet"
        case .completed: why = "it has already completed; a task completes once"
        default: why = "it is being cancelled; a cancelled task delivers URLError(.cancelled)"
        }
      }
      core.reporter.fail("Cannot complete task \(task): \(why).", at: callSite)
      return false
    }
    switch response.resolve(for: task.originalRequest) {
    case .answer(let answer):
      // A cancel() that began on another thread before this answer got the handler wins.
      guard core.complete(task, with: answer, stub: nil, yieldingToCancel: true) else {
        core.reporter.fail("Cannot complete task \(task): it was cancelled first.", at: callSite)
        return false
      }
    case .invalid(let problem):
      core.reporter.fail("Cannot complete task \(task): \(problem)", at: callSite)
      let error = URLError(.resourceUnavailable, for: task.originalRequest, description: problem)
      core.complete(task, with: Answer(error: error), stub: nil, yieldingToCancel: true)
    case .webSocket:
      let problem =
        "a WebSocket script answers only through a URLSessionMock; give the spy an HTTP answer"
      core.reporter.fail("Cannot complete task \(task): \(problem).", at: callSite)
      let error = URLError(.resourceUnavailable, for: task.originalRequest, description: problem)
      core.complete(task, with: Answer(error: error), stub: nil, yieldingToCancel: true)
    }
    return true
  }
}
