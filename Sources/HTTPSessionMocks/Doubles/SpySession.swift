import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` that records every call, and either forwards it to another session or
/// holds it until the test answers.
///
/// **Forwarding.** `SpySession(wrapping:)` passes every task to the session it wraps (a real
/// `URLSession`, a ``URLSessionMock``, anything) and never changes what that session answers:
///
/// ```swift
/// let spy = SpySession(wrapping: URLSession.shared)
/// client.session = spy
/// ...
/// spy.verify(.get("/users/octocat"), called: .once)
/// ```
///
/// **Manual.** `SpySession()` holds every resumed task with its completion handler until the test
/// completes it, in any order; this is how a test drives loading states, races and out-of-order
/// answers:
///
/// ```swift
/// let spy = SpySession()
/// client.session = spy
/// let first = Task { try await client.search("a") }
/// try await spy.waitForRequests(count: 1)
/// let second = Task { try await client.search("ab") }
/// try await spy.waitForRequests(count: 2)
/// spy.complete(spy.pendingTasks[1], with: .json(["ab"]))   // the later search answers first
/// spy.complete(spy.pendingTasks[0], with: .json(["a"]))
/// ```
public final class SpySession: RecordingSession, TaskDriver, Sendable {

  private struct State {
    /// Manual mode: resumed tasks waiting for the test, in resume order.
    var pending: [MockTask] = []
  }

  /// What the spy saw: requests and the call log.
  public let journal: RequestJournal
  /// The session calls are forwarded to, or `nil` in manual mode.
  public let wrapped: (any HTTPSession)?
  private let state = Locked(State())
  let site: CallSite

  /// Creates a spy that forwards every call to `session` and records it.
  public init(
    wrapping session: some HTTPSession, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.wrapped = session
    self.site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    self.journal = RequestJournal(ownerName: "SpySession", ownerSite: site)
    MockVerificationScope.current?.register(self)
  }

  /// Creates a spy in manual mode: resumed tasks wait in ``pendingTasks`` until the test
  /// completes them with ``complete(_:data:response:error:fileID:filePath:line:column:)`` or
  /// ``complete(_:with:fileID:filePath:line:column:)``.
  public init(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) {
    self.wrapped = nil
    self.site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    self.journal = RequestJournal(ownerName: "SpySession", ownerSite: site)
    MockVerificationScope.current?.register(self)
  }

  // MARK: - Manual mode

  /// Manual mode: the tasks that were resumed and not yet completed or cancelled, in resume
  /// order. Always empty when forwarding.
  public var pendingTasks: [MockTask] { state.withLock { $0.pending } }

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
  /// Reports a failure and returns `false` if the task is not pending (never resumed, already
  /// completed or cancelled, or not this spy's).
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
  @discardableResult
  public func complete(
    _ task: MockTask, with response: StubResponse, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    let callSite = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let taken = state.withLock { state -> Bool in
      guard let index = state.pending.firstIndex(where: { $0 === task }) else { return false }
      state.pending.remove(at: index)
      return true
    }
    guard taken else {
      let why: String
      if let wrapped {
        why =
          "this spy forwards to \(type(of: wrapped)); only a spy made with SpySession() holds "
          + "tasks for the test to complete"
      } else if task.journal !== journal {
        why = "it was made by another session; complete it on the SpySession that made it"
      } else {
        switch task.state {
        case .suspended: why = "it was never resumed, so the spy does not hold it yet"
        case .completed: why = "it has already completed; a task completes once"
        default: why = "it is being cancelled; a cancelled task delivers URLError(.cancelled)"
        }
      }
      journal.reporter.fail("Cannot complete task \(task): \(why).", at: callSite)
      return false
    }
    switch response.resolve(for: task.originalRequest) {
    case .answer(let data, let urlResponse, let error):
      // A cancel() that began on another thread before this answer got the handler wins.
      guard
        task.finish(data: data, response: urlResponse, error: error, yieldingToCancel: true)
      else {
        journal.reporter.fail("Cannot complete task \(task): it was cancelled first.", at: callSite)
        return false
      }
    case .invalid(let problem):
      journal.reporter.fail("Cannot complete task \(task): \(problem)", at: callSite)
      task.finish(
        data: nil, response: nil,
        error: URLError(.resourceUnavailable, for: task.originalRequest, description: problem),
        yieldingToCancel: true)
    }
    return true
  }

  // MARK: - HTTPSession

  /// Creates a suspended task for `request`; it is forwarded (or held) when resumed.
  public func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    makeTask(request, .data, .data(completionHandler))
  }

  /// Creates a suspended task for a GET of `url`.
  public func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  /// Creates a suspended upload task; the recorded request carries `bodyData` as its body.
  public func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    var sent = request
    sent.httpBody = bodyData
    return makeTask(sent, .upload, .data(completionHandler))
  }

  /// Creates a suspended download task.
  public func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    makeTask(request, .download, .download(keepsFile: false, completionHandler))
  }

  /// Sends `request` and returns the body and response.
  public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await AsyncBridge.data { dataTask(with: request, completionHandler: $0) }
  }

  /// Fetches `url` with a GET and returns the body and response.
  public func data(from url: URL) async throws -> (Data, URLResponse) {
    try await data(for: URLRequest(url: url))
  }

  /// Uploads `bodyData` with `request` and returns the body and response.
  public func upload(for request: URLRequest, from bodyData: Data) async throws -> (
    Data, URLResponse
  ) {
    try await AsyncBridge.data { uploadTask(with: request, from: bodyData, completionHandler: $0) }
  }

  /// Downloads `request`'s body to a file the caller owns, and returns its URL.
  public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await AsyncBridge.file { makeTask(request, .download, .download(keepsFile: true, $0)) }
  }

  private func makeTask(
    _ request: URLRequest, _ kind: SessionEvent.TaskKind, _ handler: MockTask.Handler
  ) -> MockTask {
    MockTask(request: request, kind: kind, handler: handler, journal: journal, driver: self)
  }

  // MARK: - TaskDriver

  func planResume(of task: MockTask, in journal: inout RequestJournal.State) -> ResumePlan {
    .undecided
  }

  func taskDidResume(_ task: MockTask, plan: ResumePlan) -> Bool {
    if let wrapped {
      // The wrapped session's task is made only now: a task that is never resumed sends
      // nothing, and holds nothing in the wrapped session.
      if !PassThrough.forward(task, to: wrapped) {
        journal.reporter.fail(
          "\(task.originalRequest.summary) was forwarded \(PassThrough.maximumDepth) times in a "
            + "row: this SpySession wraps a session that leads back to it.", at: site)
      }
    } else {
      // Held only while it is still running: a cancel() that came first has delivered already.
      state.withLock { state in
        if task.state == .running { state.pending.append(task) }
      }
    }
    return false
  }

  func taskDidCancel(_ task: MockTask, wasRunning: Bool) {
    if wrapped != nil && wasRunning {
      // The wrapped session decides what a cancel delivers, and when; the task's pending-cancel
      // hook has passed the cancel on.
      return
    }
    state.withLock { state in state.pending.removeAll { $0 === task } }
    task.finishCancelled()
  }
}
