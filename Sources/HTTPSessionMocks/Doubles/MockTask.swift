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
///
/// Like a `URLSessionTask`, a task keeps what it needs to finish: resumed, it runs to the end
/// even when the test no longer holds the double that made it.
///
/// > Tip: The cancellation error carries the failing URL, as URLSession's does, so compare its
/// > code rather than the whole error:
/// > `#expect { try await call.value } throws: { ($0 as? URLError)?.code == .cancelled }`.
public final class MockTask: HTTPDataTask, @unchecked Sendable, CustomStringConvertible {
  // @unchecked Sendable: the `locked` fields below are read and written only while holding the
  // lock of `core` (one lock per double, so that a transition and its record are one critical
  // region); the rest is `let`.

  /// A number that identifies the task within the double that made it, from 1.
  public let taskIdentifier: Int
  /// The request the task was created with (for uploads, with the uploaded body).
  public let originalRequest: URLRequest
  let kind: SessionEvent.TaskKind
  let door: Door
  /// The double's core: held for the task's whole life, as a URLSessionTask holds its session.
  let core: SessionCore
  /// How many forwards of our doubles led to this task, when one of them made it (see
  /// ``Forwarding``); 0 for a task the code under test made.
  let forwardDepth: Int

  // Private, and changed only by the methods below, which the core calls under its lock. They
  // stay separate fields rather than one struct: `URLRequest` is a resilient type, and a struct
  // holding one would be copied through the runtime's value witnesses on every transition.
  private var lockedState: URLSessionTask.State = .suspended
  /// Where the answer goes; `nil` once it has been delivered (or handed to a forwarded task).
  private var lockedSink: Receiver?
  private var lockedResponse: URLResponse?
  private var lockedError: (any Error)?
  /// The request of the last redirect hop the mock followed, if any.
  private var lockedCurrentRequest: URLRequest?
  /// Whether another session answers the task, so that it decides what a cancel delivers.
  private var lockedIsForwarded = false
  /// Undoes a scheduled delivery (a clock entry, a timer task, a forwarded task).
  private var lockedCancelPending: PendingCancel?
  /// Whether the sink is lent out for one part of a streamed answer (a dribbled body) and
  /// runs outside the lock; meanwhile nobody else may take it.
  private var lockedSinkIsLent = false
  /// For a streamed answer: the pieces delivered so far, which the exchange records.
  private var lockedPieceLog: PieceLog?

  init(
    core: SessionCore, taskIdentifier: Int, request: URLRequest, kind: SessionEvent.TaskKind,
    door: Door, receiver: Receiver, forwardDepth: Int = 0
  ) {
    self.core = core
    self.forwardDepth = forwardDepth
    self.taskIdentifier = taskIdentifier
    self.originalRequest = request
    self.kind = kind
    self.door = door
    self.lockedSink = receiver
  }

  /// The request the task sends now: ``originalRequest``, or the last hop of a redirect the
  /// mock followed.
  public var currentRequest: URLRequest { core.withLock { _ in currentRequestLocked } }

  /// ``currentRequest``, for code that already holds the core's lock.
  var currentRequestLocked: URLRequest { lockedCurrentRequest ?? originalRequest }

  /// Where the task is in its life.
  public var state: URLSessionTask.State { core.withLock { _ in lockedState } }

  /// The response the handler received, once it has run.
  public var response: URLResponse? { core.withLock { _ in lockedResponse } }

  /// The error the handler received, once it has run.
  public var error: (any Error)? { core.withLock { _ in lockedError } }

  /// `#1 GET https://example.com/a (running)`.
  public var description: String {
    "#\(taskIdentifier) \(originalRequest.summary) (\(Self.name(of: state)))"
  }

  /// Sends the request, or does nothing if the task has already started, finished or been
  /// cancelled.
  public func resume() {
    core.resume(self)
  }

  /// Cancels the task: the handler receives `URLError(.cancelled)` unless it has already run.
  ///
  /// > Tip: Like URLSession's, the error carries the failing URL, so it is not equal to a bare
  /// > `URLError(.cancelled)`: check its code, as in
  /// > `#expect { try await call.value } throws: { ($0 as? URLError)?.code == .cancelled }`.
  public func cancel() {
    core.cancel(self)
  }

  // MARK: Transitions, each called by the core with its lock held

  /// suspended → running; `false` if the task had already started, finished or been cancelled.
  func startLocked() -> Bool {
    guard lockedState == .suspended else { return false }
    lockedState = .running
    return true
  }

  /// Notes the request of a redirect hop the mock follows.
  func redirectLocked(to request: URLRequest) {
    lockedCurrentRequest = request
  }

  /// Takes the sink to deliver an answer: `nil` once it has been taken, or, when
  /// `yieldingToCancel`, while a cancel is under way (that cancel delivers).
  /// While the sink is lent out it is not taken: whoever returns it delivers what comes next.
  func takeSinkLocked(yieldingToCancel: Bool) -> Receiver? {
    guard let sink = lockedSink, !lockedSinkIsLent,
      !(yieldingToCancel && lockedState == .canceling)
    else {
      return nil
    }
    lockedSink = nil
    return sink
  }

  /// Lends the sink out for one part of a streamed answer, if the task still runs and no
  /// cancel is under way; the caller hands it back with ``returnSinkLocked()``.
  func lendSinkLocked() -> (any ResponseSink)? {
    guard lockedState == .running, !lockedSinkIsLent, let receiver = lockedSink else { return nil }
    let sink = receiver.asSink
    lockedSink = .sink(sink)
    lockedSinkIsLent = true
    return sink
  }

  /// Takes back a lent sink; returns `false` when a cancel began meanwhile (it found the sink
  /// lent and left the delivery of its end to the caller).
  func returnSinkLocked() -> Bool {
    lockedSinkIsLent = false
    return lockedState == .running
  }

  /// Takes the sink to hand to a forwarded task, if the task still runs; from now on the
  /// session that answers decides what a cancel delivers.
  func takeSinkForForwardingLocked() -> Receiver? {
    guard lockedState == .running, let receiver = lockedSink else { return nil }
    lockedSink = nil
    lockedIsForwarded = true
    return receiver
  }

  /// suspended or running → canceling; returns whether it was running, whether it is
  /// forwarded, and what undoes its pending delivery; `nil` if it has finished already.
  func beginCancelLocked() -> (wasRunning: Bool, forwarded: Bool, undo: PendingCancel?)? {
    guard lockedState == .suspended || lockedState == .running else { return nil }
    let wasRunning = lockedState == .running
    lockedState = .canceling
    defer { lockedCancelPending = nil }
    return (wasRunning, lockedIsForwarded, lockedCancelPending)
  }

  /// Whether a cancel has begun and the task has not finished.
  var isCancelingLocked: Bool { lockedState == .canceling }

  /// Stores what undoes the pending delivery; `false` (storing nothing) if the task no longer
  /// runs, so that the caller runs it at once.
  func setCancelPendingLocked(_ undo: PendingCancel) -> Bool {
    guard lockedState == .running else { return false }
    lockedCancelPending = undo
    return true
  }

  /// Marks the task completed with `answer`.
  /// The task's answer is streamed: `log` records its pieces.
  func streamLocked(recordingPiecesIn log: PieceLog) {
    lockedPieceLog = log
  }

  /// The record of the pieces of a streamed answer, if the answer is streamed.
  var pieceLogLocked: PieceLog? { lockedPieceLog }

  func finishLocked(_ answer: Answer) {
    lockedCancelPending = nil
    lockedState = .completed
    lockedResponse = answer.response
    lockedError = answer.error
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
