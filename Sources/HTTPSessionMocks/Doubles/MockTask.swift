import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The task that ``URLSessionMock`` and ``SpySession`` hand out.
///
/// It follows `URLSessionTask`'s life exactly: nothing happens until ``resume()``; the
/// completion handler runs exactly once; a second `resume()` does nothing; ``cancel()`` before
/// or during delivery hands the handler `URLError(.cancelled)` and wins over a pending answer;
/// `cancel()` after completion does nothing. ``state`` goes `suspended` → `running` →
/// `completed`, passing through `canceling` on cancel. The handler is released once it has run.
public final class MockTask: HTTPDataTask, @unchecked Sendable, CustomStringConvertible {
  // @unchecked Sendable: the `var`s below are read and written only while holding the lock of
  // `journal` (one lock per double, so that a transition and its record are one region); the
  // rest is `let`.

  enum Handler {
    case data(@Sendable (Data?, URLResponse?, (any Error)?) -> Void)
    case download(keepsFile: Bool, @Sendable (URL?, URLResponse?, (any Error)?) -> Void)
  }

  /// A number that identifies the task within the double that made it, from 1.
  public let taskIdentifier: Int
  /// The request the task was created with (for uploads, with the uploaded body).
  public let originalRequest: URLRequest
  /// The request the task sends: the same as ``originalRequest``, since doubles do not redirect.
  public var currentRequest: URLRequest { originalRequest }
  let kind: SessionEvent.TaskKind
  let journal: RequestJournal
  private weak var driver: (any TaskDriver)?

  private var lockedState: URLSessionTask.State = .suspended
  private var lockedHandler: Handler?
  private var lockedResponse: URLResponse?
  private var lockedError: (any Error)?
  /// Undoes a scheduled delivery (a clock entry, a timer task, a forwarded task).
  private var lockedCancelPending: (@Sendable () -> Void)?

  init(
    request: URLRequest, kind: SessionEvent.TaskKind, handler: Handler, journal: RequestJournal,
    driver: any TaskDriver
  ) {
    self.originalRequest = request
    self.kind = kind
    self.journal = journal
    self.driver = driver
    self.lockedHandler = handler
    self.taskIdentifier = journal.withLock { $0.recordCreated(request, kind: kind) }
  }

  /// Where the task is in its life.
  public var state: URLSessionTask.State { journal.withLock { _ in lockedState } }

  /// The response the handler received, once it has run.
  public var response: URLResponse? { journal.withLock { _ in lockedResponse } }

  /// The error the handler received, once it has run.
  public var error: (any Error)? { journal.withLock { _ in lockedError } }

  /// `#1 GET https://example.com/a (running)`.
  public var description: String {
    "#\(taskIdentifier) \(originalRequest.summary) (\(Self.name(of: state)))"
  }

  /// Sends the request, or does nothing if the task has already started, finished or been
  /// cancelled.
  public func resume() {
    let plan = journal.withLock { journal -> ResumePlan? in
      guard lockedState == .suspended else { return nil }
      lockedState = .running
      journal.recordResumed(originalRequest, taskIdentifier: taskIdentifier)
      return driver?.planResume(of: self, in: &journal) ?? .undecided
    }
    guard let plan else { return }
    var settled = false
    if let driver {
      settled = driver.taskDidResume(self, plan: plan)
    } else {
      journal.reporter.fail(
        "Task \(taskIdentifier) (\(originalRequest.summary)) was resumed after its "
          + "\(journal.ownerName) was released, so it was cancelled. Keep a reference to the "
          + "double for as long as its tasks run (for example, assign it to your client's session).",
        at: journal.ownerSite)
      finishCancelled()
    }
    // Wake `waitForRequests` only now, when the answer is scheduled (or delivered, or the task
    // is held by a manual spy), so that a test that wakes up can advance the clock at once.
    if !settled {
      for waiter in journal.withLock({ $0.settleResumed() }) { waiter.resume() }
    }
  }

  /// Cancels the task: the handler receives `URLError(.cancelled)` unless it has already run.
  ///
  /// > Tip: Like URLSession's, the error carries the failing URL, so it is not equal to a bare
  /// > `URLError(.cancelled)`: check its code, as in
  /// > `#expect { try await call.value } throws: { ($0 as? URLError)?.code == .cancelled }`.
  public func cancel() {
    let pending = journal.withLock {
      journal -> (wasRunning: Bool, undo: (@Sendable () -> Void)?)? in
      guard lockedState == .suspended || lockedState == .running else { return nil }
      let wasRunning = lockedState == .running
      lockedState = .canceling
      journal.recordCancelled(originalRequest, taskIdentifier: taskIdentifier)
      defer { lockedCancelPending = nil }
      return (wasRunning, lockedCancelPending)
    }
    guard let pending else { return }
    pending.undo?()
    if let driver {
      driver.taskDidCancel(self, wasRunning: pending.wasRunning)
    } else {
      finishCancelled()
    }
  }

  /// Delivers `URLError(.cancelled)` with the failing URL, as URLSession does.
  func finishCancelled() {
    finish(data: nil, response: nil, error: URLError(.cancelled, for: originalRequest))
  }

  /// Stores what undoes the pending delivery; runs it at once if the task was already cancelled.
  func setCancelPending(_ undo: @escaping @Sendable () -> Void) {
    let runNow = journal.withLock { _ -> Bool in
      guard lockedState == .running else { return true }
      lockedCancelPending = undo
      return false
    }
    if runNow { undo() }
  }

  /// Runs the handler with this answer, unless it has already run. Returns whether it ran.
  ///
  /// With `yieldingToCancel`, it does not run either once a `cancel()` has begun: the double
  /// that delivers its own answer (a stub's, a test's) lets that cancel deliver
  /// `URLError(.cancelled)`, which it always does. A forwarded answer does not yield: the
  /// wrapped session decides what a cancel delivers.
  ///
  /// With `settlingResume`, the resume that led here is settled in the same critical region
  /// (see `RequestJournal.State.settleResumed()`), and its waiters are woken after the handler.
  @discardableResult
  func finish(
    data: Data?, response: URLResponse?, error: (any Error)?, yieldingToCancel: Bool = false,
    settlingResume: Bool = false
  ) -> Bool {
    let (handler, waiters) = takeHandler(
      response: response, error: error, yieldingToCancel: yieldingToCancel,
      settlingResume: settlingResume)
    defer { for waiter in waiters { waiter.resume() } }
    guard let handler else { return false }
    switch handler {
    case .data(let body):
      body(data, response, error)
    case .download(let keepsFile, let body):
      guard error == nil else {
        body(nil, response, error)
        break
      }
      do {
        let file = try TemporaryFile.write(data ?? Data())
        body(file, response, nil)
        if !keepsFile { try? FileManager.default.removeItem(at: file) }
      } catch {
        body(nil, response, URLError(.cannotCreateFile, for: originalRequest))
      }
    }
    return true
  }

  /// Runs a download handler with a file that already exists (a forwarded download).
  @discardableResult
  func finish(file: URL?, response: URLResponse?, error: (any Error)?) -> Bool {
    guard let handler = takeHandler(response: response, error: error).0 else { return false }
    switch handler {
    case .data(let body):
      body(file.flatMap { try? Data(contentsOf: $0) }, response, error)
    case .download(let keepsFile, let body):
      // The forwarding session deletes its file when this returns; a kept file must be a copy.
      guard keepsFile, let file else {
        body(file, response, error)
        break
      }
      do {
        let copy = try TemporaryFile.write(Data(contentsOf: file))
        body(copy, response, error)
      } catch {
        body(nil, response, URLError(.cannotCreateFile, for: originalRequest))
      }
    }
    return true
  }

  private func takeHandler(
    response: URLResponse?, error: (any Error)?, yieldingToCancel: Bool = false,
    settlingResume: Bool = false
  ) -> (Handler?, [CheckedContinuation<Void, any Error>]) {
    journal.withLock { journal -> (Handler?, [CheckedContinuation<Void, any Error>]) in
      let waiters = settlingResume ? journal.settleResumed() : []
      guard let handler = lockedHandler,
        !(yieldingToCancel && lockedState == .canceling)
      else { return (nil, waiters) }
      lockedHandler = nil
      lockedCancelPending = nil
      lockedState = .completed
      lockedResponse = response
      lockedError = error
      journal.recordCompleted(
        originalRequest, taskIdentifier: taskIdentifier, response: response, error: error)
      return (handler, waiters)
    }
  }

  static func name(of state: URLSessionTask.State) -> String {
    switch state {
    case .suspended: return "suspended"
    case .running: return "running"
    case .canceling: return "canceling"
    case .completed: return "completed"
    @unknown default: return "unknown"
    }
  }
}
