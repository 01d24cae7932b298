import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The life of a task: `suspended` → `running` → `completed`, through `canceling` on cancel;
// where its answer goes, what undoes its pending delivery, and what it answered.
//
// Every change of a task's life is one of the transitions below, made by the core in the
// critical region that records it, and every read of it is one of the readers below. They are
// `mutating` methods of the core's locked state, so that only the holder of its lock (the
// `inout State` of `withLock`) can call them, even to read; a `MockTask` keeps the life's
// fields (see there why it stores them) and has no transitions of its own.
extension SessionCore.State {
  /// suspended → running; `false` if the task had already started, finished or been cancelled.
  @inline(__always) mutating func start(_ task: MockTask) -> Bool {
    guard task.lifeState == .suspended else { return false }
    task.lifeState = .running
    return true
  }

  /// Notes the request of a redirect hop the mock follows.
  @inline(__always) mutating func redirect(_ task: MockTask, to request: URLRequest) {
    task.lifeCurrentRequest = request
  }

  /// The request `task` sends now: its own, or the last hop of a redirect the mock followed.
  @inline(__always) mutating func currentRequest(of task: MockTask) -> URLRequest {
    task.lifeCurrentRequest ?? task.originalRequest
  }

  /// Where `task` is in its life.
  @inline(__always) mutating func state(of task: MockTask) -> URLSessionTask.State {
    task.lifeState
  }

  /// The response and the error the task's handler received, once it has run.
  @inline(__always) mutating func outcome(of task: MockTask) -> (
    response: URLResponse?, error: (any Error)?
  ) {
    (task.lifeResponse, task.lifeError)
  }

  /// Takes the sink to deliver an answer: `nil` once it has been taken, or, when
  /// `yieldingToCancel`, while a cancel is under way (that cancel delivers).
  /// While the sink is lent out it is not taken: whoever returns it delivers what comes next.
  @inline(__always) mutating func takeSink(of task: MockTask, yieldingToCancel: Bool) -> Receiver? {
    guard let sink = task.lifeSink, !task.lifeSinkIsLent,
      !(yieldingToCancel && task.lifeState == .canceling)
    else {
      return nil
    }
    task.lifeSink = nil
    return sink
  }

  /// Lends the sink out for one part of a streamed answer, if the task still runs and no
  /// cancel is under way; the caller hands it back with ``returnSink(of:)``.
  @inline(__always) mutating func lendSink(of task: MockTask) -> (any ResponseSink)? {
    guard task.lifeState == .running, !task.lifeSinkIsLent, let receiver = task.lifeSink else {
      return nil
    }
    let sink = receiver.asSink
    task.lifeSink = .sink(sink)
    task.lifeSinkIsLent = true
    return sink
  }

  /// Takes back a lent sink; returns `false` when a cancel began meanwhile (it found the sink
  /// lent and left the delivery of its end to the caller).
  @inline(__always) mutating func returnSink(of task: MockTask) -> Bool {
    task.lifeSinkIsLent = false
    return task.lifeState == .running
  }

  /// Takes the sink to hand to a forwarded task, if the task still runs; from now on the
  /// session that answers decides what a cancel delivers.
  @inline(__always) mutating func takeSinkForForwarding(of task: MockTask) -> Receiver? {
    guard task.lifeState == .running, let receiver = task.lifeSink else { return nil }
    task.lifeSink = nil
    task.lifeIsForwarded = true
    return receiver
  }

  /// suspended or running → canceling; returns whether it is forwarded and what undoes its
  /// pending delivery; `nil` if it has finished already.
  @inline(__always) mutating func beginCancel(_ task: MockTask) -> (
    forwarded: Bool, undo: PendingCancel?
  )? {
    guard task.lifeState == .suspended || task.lifeState == .running else { return nil }
    task.lifeState = .canceling
    defer { task.lifeCancelPending = nil }
    return (task.lifeIsForwarded, task.lifeCancelPending)
  }

  /// Whether a cancel has begun and the task has not finished.
  @inline(__always) mutating func isCanceling(_ task: MockTask) -> Bool {
    task.lifeState == .canceling
  }

  /// Stores what undoes the pending delivery; `false` (storing nothing) if the task no longer
  /// runs, so that the caller runs it at once.
  @inline(__always) mutating func setCancelPending(_ task: MockTask, _ undo: PendingCancel) -> Bool
  {
    guard task.lifeState == .running else { return false }
    task.lifeCancelPending = undo
    return true
  }

  /// The task's answer is streamed: `log` records its pieces.
  @inline(__always) mutating func stream(_ task: MockTask, recordingPiecesIn log: PieceLog) {
    task.lifePieceLog = log
  }

  /// The record of the pieces of the task's answer, if the answer is streamed.
  @inline(__always) mutating func pieceLog(of task: MockTask) -> PieceLog? { task.lifePieceLog }

  /// → completed with `answer`.
  @inline(__always) mutating func finish(_ task: MockTask, _ answer: Answer) {
    task.lifeCancelPending = nil
    task.lifeState = .completed
    task.lifeResponse = answer.response
    task.lifeError = answer.error
  }
}
