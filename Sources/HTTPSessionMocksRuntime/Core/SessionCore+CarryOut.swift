import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The second step of a request: carrying a ``Plan`` out. Timeouts, the clock (and what
// happens when its watchdog stalls or it is gone), the test's reports, and delivery to the
// door's sink all happen here, never under the lock.
extension SessionCore {
  /// Carries out what ``decide(_:)`` planned for `task`.
  func carryOut(_ plan: consuming Plan, for task: MockTask) {
    switch consume plan {
    case .after(let delay, let answer, let context):
      schedule(answer, to: task, context, after: delay)
    case .stream(let answer, let dribble, let delay, let context):
      stream(answer, dribble, to: task, context, after: delay)
    case .forward(let forward):
      self.forward(
        task, forward.request, forward.receiver, to: forward.session, core: forward.core,
        sending: forward.upstream, stub: forward.stub)
    case .hold(let held):
      held.object?.hold(task)
      settleResume()
    case .unmatched(let unmatched) where unmatched.overrun != nil:
      let request = unmatched.request
      let report = MatchBudget.report(unmatched.overrun, for: request)
      reporter.fail(report, at: ownerSite)
      let error = URLError(
        .resourceUnavailable, for: request,
        description: "URLSessionMock: matching \(request.summary) ran past its budget")
      let answer = Answer(
        unmatched: UnmatchedAnswer(report: report, error: error, status: 500))
      schedule(answer, to: task, Plan.Context(request: request, stub: nil))
    case .unmatched(let unmatched):
      let request = unmatched.request
      // A URLProtocol never sees an upload task's body: the report says so when it matters.
      let bodyUnseen =
        !task.traits.seesUploadBody && task.kind == .upload && request.httpBody == nil
      let redaction = unmatched.redaction
      // The near misses run every pattern again: under a budget of their own.
      let budget = MatchBudget(withLock { $0.matchLimits })
      let misses = budget.run { unmatched.table.nearMisses(for: request, redacting: redaction) }
      var report = NearMiss.unmatchedReport(
        request, misses, bodyUnseen: bodyUnseen, traits: task.traits, voice: voice,
        redaction: redaction)
      if let overrun = budget.overrun {
        report +=
          "(Some differences above may be wrong: comparing the stubs stopped when the "
          + "\(overrun.pattern) \(overrun.reason).)\n"
      }
      reporter.fail(report, at: ownerSite)
      let error = URLError(
        .resourceUnavailable, for: request,
        description: "URLSessionMock: no stub matches \(request.summary)")
      let answer = Answer(unmatched: UnmatchedAnswer(report: report, error: error))
      schedule(answer, to: task, Plan.Context(request: request, stub: nil))
    case .refuse(let error, let report, let site, let context, let yieldsToCancel):
      if let report { reporter.fail(report, at: site) }
      guard yieldsToCancel else {
        complete(task, with: Answer(error: error), stub: context.stub, settlingResume: true)
        return
      }
      schedule(Answer(error: error), to: task, context)
    }
  }

  // MARK: - Whole answers

  /// Delivers `answer` now, or on the clock after `delay`; an answer later than the task's
  /// time limits allow (its request timeout, its resource timeout) fails with
  /// `URLError(.timedOut)` at that time instead, as URLSession's would. The resume is settled once the answer is delivered or scheduled.
  private func schedule(
    _ answer: Answer, to task: MockTask, _ context: Plan.Context, after delay: Duration = .zero
  ) {
    guard delay > .zero else {
      complete(
        task, with: answer, stub: context.stub, yieldingToCancel: true, settlingResume: true)
      return
    }
    let request = context.request
    let limit = task.limits.head
    let timesOut = limit.map { delay > $0 } ?? false
    let (answer, delay) =
      timesOut
      ? (Answer(error: URLError(timedOutFor: request)), limit ?? delay) : (answer, delay)
    if scheduler.runsInRealTimeByDefault {
      warnAboutRealTime(delay, site: context.stub?.site ?? ownerSite)
    }
    let stub = context.stub
    let undo = scheduler.schedule(after: delay) { [self] stalled in
      let answer = stalled ? Self.stalledAnswer(for: request) : answer
      complete(task, with: answer, stub: stub, yieldingToCancel: true)
    }
    guard let undo else {
      return clockReleased(task, context, after: delay, settlingResume: true)
    }
    setCancelPending(task, undo, settlingResume: true)
  }

  // MARK: - Streamed answers (a dribbled body)

  /// A streamed answer on its way: what ``streamParts(_:from:)`` needs at each step. A class,
  /// so that each step's clock entry holds it with one reference.
  final class Streaming: Sendable {
    let task: MockTask
    let context: Plan.Context
    let answer: Answer
    let plan: DribblePlan
    /// The pieces delivered so far, with their times: the exchange records them.
    let log: PieceLog

    init(
      task: MockTask, context: Plan.Context, answer: Answer, plan: DribblePlan, log: PieceLog
    ) {
      self.task = task
      self.context = context
      self.answer = answer
      self.plan = plan
      self.log = log
    }

    /// The time of part `index` after the head: the head is part -1, at zero.
    func offset(of index: Int) -> Duration {
      index < 0 ? .zero : plan.pieces[index].offset
    }
  }

  /// Delivers `answer` in parts on the clock: the head after `delay`, then each piece of `plan`
  /// at its time after the head, then the end (or the timeout that cut the plan).
  private func stream(
    _ answer: Answer, _ plan: DribblePlan, to task: MockTask, _ context: Plan.Context,
    after delay: Duration
  ) {
    let log = PieceLog(since: scheduler.now())
    withLock { $0.stream(task, recordingPiecesIn: log) }
    let streaming = Streaming(task: task, context: context, answer: answer, plan: plan, log: log)
    let duration = plan.failsAt ?? plan.pieces.last?.offset ?? .zero
    if scheduler.runsInRealTimeByDefault, max(delay, duration) > .zero {
      warnAboutRealTime(max(delay, duration), site: context.stub?.site ?? ownerSite)
    }
    if delay > .zero {
      onClock(after: delay, task, context, .part(streaming, -1))
    } else {
      streamParts(streaming, from: -1)
    }
    // Settled once the head is delivered or scheduled, as a delayed answer is.
    settleResume()
  }

  /// Delivers the parts due now, from `index` (-1 is the head), then schedules the next one
  /// on the clock, or ends the exchange after the last.
  private func streamParts(_ streaming: Streaming, from index: Int) {
    let task = streaming.task
    let context = streaming.context
    var index = index
    while true {
      let delivered = lendSink(of: task) { sink in
        if index < 0 {
          if let response = streaming.answer.response { sink.receive(response) }
        } else {
          let body = streaming.plan.pieces[index].body
          streaming.log.record(body.count, at: scheduler.now())
          sink.receive(body)
        }
      }
      guard delivered else { return }
      let next = index + 1
      guard next < streaming.plan.pieces.count else { break }
      let wait = streaming.offset(of: next) - streaming.offset(of: index)
      if wait > .zero { return onClock(after: wait, task, context, .part(streaming, next)) }
      index = next
    }
    guard let failsAt = streaming.plan.failsAt else {
      let wait =
        (streaming.plan.endsAt ?? streaming.offset(of: index)) - streaming.offset(of: index)
      guard wait > .zero else { return endStream(streaming) }
      return onClock(after: wait, task, context, .end(streaming))
    }
    // Cut by a time limit (a quiet gap longer than the request timeout, or the resource
    // timeout): the stream fails then.
    let error = Answer(error: URLError(timedOutFor: context.request))
    let wait = failsAt - streaming.offset(of: index)
    guard wait > .zero else {
      complete(task, with: error, stub: context.stub, yieldingToCancel: true)
      return
    }
    onClock(after: wait, task, context, .deliver(error))
  }

  /// Ends a stream whose pieces are all delivered: the answer's end, or, for a stream that
  /// drops (``StubResponse/truncated(after:)``, an event stream's `.drop`), the connection's
  /// loss.
  private func endStream(_ streaming: Streaming) {
    let context = streaming.context
    guard streaming.plan.drops else {
      complete(
        streaming.task, with: streaming.answer, stub: context.stub, yieldingToCancel: true,
        endOnly: true)
      return
    }
    let error = URLError(
      .networkConnectionLost, for: context.request,
      description: "the stub's stream ended early: the connection dropped")
    complete(streaming.task, with: Answer(error: error), stub: context.stub, yieldingToCancel: true)
  }

  /// Runs `part` with the task's sink lent out, unless the task has ended or a cancel is under
  /// way; returns whether the stream goes on. A cancel that begins while the sink is out leaves
  /// its end to this call, which delivers it when the part returns.
  private func lendSink(of task: MockTask, _ part: (any ResponseSink) -> Void) -> Bool {
    guard let sink = withLock({ $0.lendSink(of: task) }) else { return false }
    part(sink)
    guard withLock({ $0.returnSink(of: task) }) else {
      complete(task, with: Answer(cancelling: task.currentRequest), stub: nil)
      return false
    }
    return true
  }

  // MARK: - The clock

  /// What runs when the clock reaches a stream's next step.
  enum ClockStep: Sendable {
    /// The error that ends the stream (its timeout).
    case deliver(Answer)
    /// The parts of the stream from this index (-1: the head).
    case part(Streaming, Int)
    /// The stream's end, after its last piece.
    case end(Streaming)
  }

  /// Runs a stream's next `step` for `task` after `wait` on the double's clock.
  private func onClock(
    after wait: Duration, _ task: MockTask, _ context: Plan.Context, _ step: ClockStep
  ) {
    let request = context.request
    let stub = context.stub
    let undo = scheduler.schedule(after: wait) { [self] stalled in
      guard !stalled else {
        complete(task, with: Self.stalledAnswer(for: request), stub: stub, yieldingToCancel: true)
        return
      }
      switch step {
      case .deliver(let answer):
        complete(task, with: answer, stub: stub, yieldingToCancel: true)
      case .part(let streaming, let index):
        streamParts(streaming, from: index)
      case .end(let streaming):
        endStream(streaming)
      }
    }
    guard let undo else { return clockReleased(task, context, after: wait) }
    setCancelPending(task, undo)
  }

  /// What a step that the clock's stall watchdog ended answers (nothing advanced the
  /// VirtualClock to it): a timeout that says why.
  private static func stalledAnswer(for request: URLRequest) -> Answer {
    let message = "URLSessionMock: nothing advanced the VirtualClock to this answer"
    return Answer(error: URLError(.timedOut, for: request, description: message))
  }

  /// A step (a whole answer, a stream's next part) cannot be scheduled: its VirtualClock is
  /// gone, so nothing could ever advance it. The test hears why; the request times out.
  private func clockReleased(
    _ task: MockTask, _ context: Plan.Context, after wait: Duration, settlingResume: Bool = false
  ) {
    let request = context.request
    reporter.fail(
      "\(request.summary) is answered after \(wait) on a VirtualClock that no longer exists, "
        + "so nothing can ever advance it; the request fails with URLError(.timedOut). Keep "
        + "the clock for as long as the test runs.", at: context.stub?.site ?? ownerSite)
    let error = URLError(.timedOut, for: request, description: "its VirtualClock was released")
    complete(task, with: Answer(error: error), stub: context.stub, settlingResume: settlingResume)
  }

  // MARK: - Forwarded answers

  /// Forwards `task`, whose receiver the plan has taken, to another session; what that
  /// session answers is delivered as it is, and a cancel is passed on for it to deliver.
  ///
  /// The task's receiver moves into a ``ForwardRelay``, which the wrapped task answers into:
  /// the relay records the exchange and completes the task. The task holds the wrapped task
  /// until then, to pass a cancel on.
  func forward(
    _ task: MockTask, _ request: URLRequest, _ receiver: Receiver?, to session: any HTTPSession,
    core: SessionCore?, sending upstream: URLRequest? = nil, stub: StubTable.Definition? = nil
  ) {
    guard let receiver else {
      settleResume()  // a cancel came first and has delivered
      return
    }
    let relay = ForwardRelay(for: task, request, receiver, in: self, stub: stub)
    // The door may add to what is sent (the loopback server's `Via` hop).
    let request = receiver.forwarding(upstream ?? request)
    let depth = Forwarding.depth(of: task) + 1
    guard let core else {
      let inner = Forwarding.makeTask(
        task.kind, request, in: session, relay: relay.handlerTakingFirstAnswer)
      Forwarding.resume(inner, depth: depth)
      endForwardedResume(of: task, relay) { inner.cancel() }
      return
    }
    let inner = Forwarding.makeTask(task.kind, request, in: core, depth: depth, relay: relay)
    inner.resume()
    endForwardedResume(of: task, relay) { inner.cancel() }
  }

  /// Ends a forward once the wrapped task's resume has returned: settles the resume and, unless
  /// the answer has come, stores what cancels the wrapped task, in one critical region. A
  /// cancel that came meanwhile found nothing to undo, so it runs here, and the wrapped session
  /// delivers the cancel. (A wrapped task that has answered already needs no cancel.)
  private func endForwardedResume(
    of task: MockTask, _ relay: ForwardRelay, _ cancel: @escaping @Sendable () -> Void
  ) {
    let (runNow, waiters) = withLock { state in
      relay.endResumeLocked()
      let stored = state.setCancelPending(task, .action(cancel))
      return (!stored && state.isCanceling(task), state.settle())
    }
    if runNow { cancel() }
    waiters.wake()
  }
}
