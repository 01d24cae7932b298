import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where a forwarded task's wrapped task answers: records the answer as the forwarding
/// double's exchange, marks the double's task completed, and delivers to its receiver.
///
/// The relay must not keep the double's task alive while the answer is pending: the task
/// holds the wrapped task (to cancel it), the double holds the wrapped session, and that
/// session may hold the clock whose queue holds the wrapped task. So once the wrapped task's
/// resume has returned unanswered, the relay holds the task weakly. While that resume runs, it
/// holds the task strongly, and lets it go when the resume returns: an answer that comes at
/// once (as a mock's usually does) then needs no weak reference, which would give the task a
/// side table and slow each of its later retains and releases.
final class ForwardRelay: @unchecked Sendable {
  // @unchecked Sendable: `resumingTask`, `pendingTask` and `answered` are read and
  // written only under the forwarding core's lock (the `state` that the relay holds weakly,
  // and that the core's forward holds while it sets them up); the other fields are `let`.

  /// The forwarding double's state, weakly: its core holds the wrapped session.
  private let state: WeakLocked<SessionCore.State>
  /// Where the answer goes: the double's task's receiver.
  private let receiver: Receiver
  private let request: URLRequest
  private let taskIdentifier: Int
  private let door: Door
  /// The stub whose answer this is (a proxied stub's), or `nil`.
  private let stub: StubTable.Definition?
  /// Where a second answer is reported, and the line that made the forwarding double: the
  /// core's, shared by reference. (Copying the reporter and the site into each relay, and
  /// releasing them, cost about 90 instructions a forward in the `spy` benchmark.)
  private let secondAnswer: SecondAnswerReport

  /// The double's task while the wrapped task's resume runs; `nil` once it has returned.
  private var resumingTask: MockTask?
  /// The double's task once the resume has returned without an answer; `nil` once gone.
  private weak var pendingTask: MockTask?
  private var answered = false

  init(
    for task: MockTask, _ request: URLRequest, _ receiver: Receiver, in core: SessionCore,
    stub: StubTable.Definition? = nil
  ) {
    self.stub = stub
    self.secondAnswer = core.secondAnswerReport
    self.state = core.weakState
    self.receiver = receiver
    self.request = request
    self.taskIdentifier = task.taskIdentifier
    self.door = task.door
    self.resumingTask = task
  }

  /// The wrapped task's answer, in the completion handler's form, for a task of one of our
  /// doubles, which answers once (its task's life allows one answer).
  var handler: CompletionSink.Handler {
    { [self] data, response, error in
      deliver(Answer(data: data, response: response, error: error))
    }
  }

  /// The wrapped task's answer, in the completion handler's form, for a task of a session of
  /// the user's, which may call its handler again: only the first call counts, and a later one
  /// is reported, neither recorded nor delivered (a second delivery would resume an awaiting
  /// call's continuation twice).
  ///
  /// Whether the handler has run has a lock of its own, made here: the wrapped session may call
  /// it again after the forwarding core is gone. Our doubles' tasks answer through ``handler``
  /// or ``deliver(_:)`` and need none (the lock, made, taken and freed for every forward, was
  /// about 475 instructions a forward in the `spy` benchmark).
  var handlerTakingFirstAnswer: CompletionSink.Handler {
    let called = Locked(false)
    return { [self] data, response, error in
      let first = called.withLock { called in
        defer { called = true }
        return !called
      }
      guard first else { return reportSecondAnswer() }
      deliver(Answer(data: data, response: response, error: error))
    }
  }

  /// What the receiver of the forwarding double's task sends for a forward of the wrapped
  /// task's request (see `Receiver.forwarding(_:)`).
  func forwarding(_ request: URLRequest) -> URLRequest {
    receiver.forwarding(request)
  }

  /// Records `answer` to the forwarded task, marks the task completed (if it is still there:
  /// the test may have dropped it, and its answer still counts), then delivers it.
  ///
  /// Called once: by a task of one of our doubles, whose life allows one answer, or through
  /// ``handlerTakingFirstAnswer``, which lets only a session's first answer through.
  func deliver(_ answer: Answer) {
    // The wrapped double's report is its own; to this double it is a transport error.
    let answer = answer.unmatched.map { Answer(error: $0.error) } ?? answer
    let exchange = Exchange(
      taskIdentifier: taskIdentifier, request: request, answer: answer, stub: stub, door: door)
    let ended: Wakeups =
      state.withLock { state in
        answered = true
        if let task = resumingTask ?? pendingTask { state.finish(task, answer) }
        receiver.recorded(exchange)
        return state.recordEnded(exchange)
      } ?? .none
    receiver.deliver(answer)
    ended.wake()
  }

  /// Reports a second answer from the session of the user's that the task was forwarded to.
  private func reportSecondAnswer() {
    secondAnswer.reporter.fail(
      "\(request.summary) was answered a second time by the session it was forwarded to (its "
        + "completion handler ran again). URLSession calls a task's completion handler once; "
        + "the first answer stands, and this one is dropped. Check the wrapped session's "
        + "task: it should call the handler exactly once.", at: stub?.site ?? secondAnswer.site)
  }

  /// Ends the resume of the wrapped task; called under the forwarding core's lock, with the
  /// task still held by the caller. From now on the relay holds the task weakly, unless the
  /// answer has come already.
  func endResumeLocked() {
    if !answered { pendingTask = resumingTask }
    resumingTask = nil
  }
}

/// What a forwarding core's relays need to report a second answer: its reporter and the line
/// that made the double. One per core, which each relay holds by reference.
final class SecondAnswerReport: Sendable {
  let reporter: FailureReporter
  let site: CallSite

  init(reporter: FailureReporter, site: CallSite) {
    self.reporter = reporter
    self.site = site
  }
}
