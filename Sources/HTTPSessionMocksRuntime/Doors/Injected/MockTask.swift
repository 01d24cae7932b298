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
  // @unchecked Sendable: the `life` fields below are read and written only by the core, under
  // its lock (one lock per double, so that a transition and its record are one critical
  // region), through the transitions of `Core/TaskLife.swift`; the rest is `let`.

  /// A number that identifies the task within the double that made it, from 1.
  public let taskIdentifier: Int
  /// The request the task was created with (for uploads, with the uploaded body).
  public let originalRequest: URLRequest
  let kind: SessionEvent.TaskKind
  /// What the core needs to know of the door the request came through.
  let traits: DoorTraits
  /// The door the request came through, which its exchanges record.
  var door: Door { traits.door }
  /// The double's core: held for the task's whole life, as a URLSessionTask holds its session.
  let core: SessionCore
  /// How many forwards of our doubles led to this task, when one of them made it (see
  /// ``Forwarding``); 0 for a task the code under test made.
  let forwardDepth: Int
  /// The double's resource timeout when the task was made; `nil` for none.
  let resourceTimeout: Duration?

  // The task's life: changed only by the transitions of `SessionCore.State` in
  // `Core/TaskLife.swift`, under the core's lock, and read by nothing else (the public
  // properties below ask the core). Separate stored fields rather than one struct: a struct
  // changed in place through a class property takes the runtime's dynamic exclusivity checks
  // (measured: about 230 instructions a request in the `mock` benchmark), where a stored
  // field's single read or write takes none.
  var lifeState: URLSessionTask.State = .suspended
  /// Where the answer goes; `nil` once it has been delivered (or handed to a forwarded task).
  var lifeSink: Receiver?
  var lifeResponse: URLResponse?
  var lifeError: (any Error)?
  /// The request of the last redirect hop the mock followed, if any.
  var lifeCurrentRequest: URLRequest?
  /// Whether another session answers the task, so that it decides what a cancel delivers.
  var lifeIsForwarded = false
  /// Undoes a scheduled delivery (a clock entry, a timer task, a forwarded task).
  var lifeCancelPending: PendingCancel?
  /// Whether the sink is lent out for one part of a streamed answer (a dribbled body) and
  /// runs outside the lock; meanwhile nobody else may take it.
  var lifeSinkIsLent = false
  /// For a streamed answer: the pieces delivered so far, which the exchange records.
  var lifePieceLog: PieceLog?

  init(
    core: SessionCore, taskIdentifier: Int, request: URLRequest, kind: SessionEvent.TaskKind,
    traits: DoorTraits, receiver: Receiver, forwardDepth: Int = 0,
    resourceTimeout: Duration? = nil
  ) {
    self.core = core
    self.resourceTimeout = resourceTimeout
    self.forwardDepth = forwardDepth
    self.taskIdentifier = taskIdentifier
    self.originalRequest = request
    self.kind = kind
    self.traits = traits
    self.lifeSink = receiver
  }

  /// The request's time limits: its idle timeout and the transfer's resource timeout.
  ///
  /// Worked out when a delay or a stream needs them, not when the task is made: reading the
  /// request's timeout costs about 400 instructions, which an answer due at once never needs.
  var limits: TimeLimits {
    TimeLimits(for: originalRequest, traits: traits, resourceTimeout: resourceTimeout)
  }

  /// The request the task sends now: ``originalRequest``, or the last hop of a redirect the
  /// mock followed.
  public var currentRequest: URLRequest { core.withLock { $0.currentRequest(of: self) } }

  /// Where the task is in its life.
  public var state: URLSessionTask.State { core.withLock { $0.state(of: self) } }

  /// The response the handler received, once it has run.
  public var response: URLResponse? { core.withLock { $0.outcome(of: self).response } }

  /// The error the handler received, once it has run.
  public var error: (any Error)? { core.withLock { $0.outcome(of: self).error } }

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
