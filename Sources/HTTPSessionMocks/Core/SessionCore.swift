import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The one request path behind every double and every door.
///
/// A ``URLSessionMock`` and a ``SpySession`` each own one core. It holds the double's whole
/// mutable state (records, the life of its tasks, the stub table and scenario state, waiters)
/// behind one lock, and runs every request the same way, top to bottom in ``resume(_:)``:
/// record → route → build the answer → schedule → deliver. How the double answers is the
/// core's ``Answering`` strategy: from stubs (a mock), by forwarding to a wrapped session, or
/// by holding the task for the test (a spy). The doors (the injected `HTTPSession` methods, the
/// URLProtocol bridge, the loopback server) only translate: each makes a task with a
/// ``ResponseSink`` and resumes it.
///
/// Lifetimes: a task holds its core, so a resumed task runs to the end even when the test has
/// dropped the double, as URLSession's tasks keep their session. The core holds no task except
/// while a delivery is pending (in the clock's queue or a timer), and holds a ``VirtualClock``
/// only weakly, so nothing here makes a cycle.
///
/// No user code (matcher closures, response closures, completion handlers, another session)
/// and no continuation ever runs under the lock.
final class SessionCore: Sendable {
  /// How the double answers a resumed task.
  enum Answering: Sendable {
    /// From the stub table (a mock).
    case stubs
    /// By passing the task to another session (a forwarding spy).
    case forward(any HTTPSession)
    /// By holding the task until the test completes it (a manual spy).
    case hold(WeakReference<HeldTasks>)
  }

  struct Waiter {
    var count: Int
    var continuation: CheckedContinuation<Void, any Error>
  }

  struct State {
    var records = Records()
    var stubs = StubTable()
    var policy = UnmatchedRequestPolicy.fail
    /// Sent requests whose answer the double has scheduled (or delivered, or held):
    /// `waitForRequests` counts these, so a test that wakes can act on the answer at once.
    var settledCount = 0
    var waiters: [ObjectIdentifier: Waiter] = [:]
    /// Whether the mock has warned that its delays take real time (it does so once).
    var warnedAboutRealTimeDelay = false
    /// Which header values the double's reports mask.
    var reportRedaction = ReportRedaction.default

    /// Counts one sent request as settled; returns the waiters this satisfies, to resume
    /// outside the lock.
    mutating func settle() -> [CheckedContinuation<Void, any Error>] {
      settledCount += 1
      guard !waiters.isEmpty else { return [] }
      let count = settledCount
      let met = waiters.filter { $0.value.count <= count }
      for key in met.keys { waiters[key] = nil }
      return met.values.map(\.continuation)
    }
  }

  let answering: Answering
  /// Whether ``answering`` is `.stubs`, read on every request without copying the strategy.
  private let answersFromStubs: Bool
  /// When ``answering`` forwards to one of our doubles, that double's core: a forward then
  /// makes its task there directly (see ``Forwarding``).
  private let forwardCore: SessionCore?
  /// The kind of double, for messages: `URLSessionMock`, `SpySession`.
  let ownerName: String
  /// Where the double was created: unmatched requests are reported here.
  let ownerSite: CallSite
  /// How the double's reports speak of it and of what to do.
  let voice: ReportVoice
  let reporter: FailureReporter
  let scheduler: Scheduler
  private let state: Locked<State>

  init(
    answering: Answering, ownerName: String, ownerSite: CallSite, clock: (any Clock<Duration>)?,
    voice: ReportVoice = .code
  ) {
    self.answering = answering
    if case .stubs = answering { answersFromStubs = true } else { answersFromStubs = false }
    if case .forward(let session) = answering {
      forwardCore = Forwarding.core(of: session)
    } else {
      forwardCore = nil
    }
    self.ownerName = ownerName
    self.ownerSite = ownerSite
    self.voice = voice
    self.reporter = FailureReporter(speaker: voice.speaker)
    self.scheduler = Scheduler(clock: clock)
    self.state = Locked(State())
  }

  /// Which header values the double's reports mask.
  var reportRedaction: ReportRedaction {
    get { state.withLock { $0.reportRedaction } }
    set { state.withLock { $0.reportRedaction = newValue } }
  }

  /// Runs `body` under the core's lock. It must run no user code and resume nothing.
  func withLock<Result>(_ body: (inout State) -> Result) -> Result {
    state.withLock(body)
  }

  /// The core's state, held weakly: what a ``Stub`` handle and a forward's relay hold, so that
  /// neither keeps the double alive (see ``WeakLocked`` for why not the core itself).
  var weakState: WeakLocked<State> { state.weak }

  // MARK: - Tasks: the doors' way in

  /// Creates a suspended task whose answer goes to `receiver`.
  func makeTask(
    _ request: URLRequest, kind: SessionEvent.TaskKind, door: Door, receiver: Receiver,
    forwardDepth: Int = 0
  ) -> MockTask {
    let identifier = state.withLock { $0.records.recordCreated(request, kind: kind) }
    return MockTask(
      core: self, taskIdentifier: identifier, request: request, kind: kind, door: door,
      receiver: receiver, forwardDepth: forwardDepth)
  }

  /// Answers `task` with `error` without routing it: a door's own refusal of a request it
  /// cannot carry (a body too large to read, a kind of task it cannot serve). The request is
  /// recorded as sent and the refusal as its exchange, so that the journal holds every answer
  /// a door gives.
  func refuse(_ task: MockTask, with error: URLError) {
    let started = state.withLock { state -> Bool in
      guard task.startLocked() else { return false }
      state.records.recordSent(task.originalRequest, taskIdentifier: task.taskIdentifier)
      return true
    }
    guard started else { return }
    complete(task, with: Answer(error: error), stub: nil, settlingResume: true)
  }

  // MARK: - The path of a request

  /// What was decided while the resume was recorded.
  private enum Start {
    /// Nothing yet: routing runs matchers from the test, so it happens outside the lock.
    case undecided
    /// Routing ran inside the lock: this stub answers, or none (`nil`) does.
    case routed(StubTable.Claim?)
    /// The whole request ran inside the lock (see ``resume(_:)``): the sink to deliver to,
    /// and the waiters to wake after it.
    case answered(Receiver, Answer, [CheckedContinuation<Void, any Error>])
    /// A forwarding double took the task's request and receiver in the same critical region
    /// (`nil`: a cancel came first and has delivered).
    case forwarding(URLRequest, Receiver?)
  }

  /// Sends `task`'s request: record → route → build the answer → schedule → deliver.
  ///
  /// The common case runs in one critical region: a table without matcher closures is routed
  /// and its stub claimed where the request is recorded, and when that stub's answer is due at
  /// once and already built for this URL (as it is from the second request on), the task is
  /// finished and its exchange recorded there too; only the delivery to the sink follows,
  /// outside the lock. Every other request goes the long way, step by step below.
  func resume(_ task: MockTask) {
    // 1. Record: the task runs and its request is sent. A table without matcher closures is
    //    routed and its stub claimed in the same critical region.
    let start = state.withLock { state -> Start? in
      guard task.startLocked() else { return nil }
      state.records.recordSent(task.originalRequest, taskIdentifier: task.taskIdentifier)
      guard answersFromStubs else {
        guard case .forward = answering,
          Forwarding.depth(of: task) < Forwarding.maximumDepth
        else { return .undecided }
        return .forwarding(task.currentRequestLocked, task.takeSinkForForwardingLocked())
      }
      guard state.stubs.registry.userCodeCount == 0 else { return .undecided }
      guard let claim = state.stubs.claimFirstMatch(task.originalRequest) else {
        return .routed(nil)
      }
      guard let answer = Self.readyAnswer(claim, for: task, in: &state.stubs),
        let sink = task.takeSinkLocked(yieldingToCancel: true)
      else { return .routed(claim) }
      finishLocked(task, answer, stub: claim.definition, for: sink, in: &state)
      return .answered(sink, answer, state.settle())
    }
    switch start {
    case nil: return
    case .answered(let receiver, let answer, let waiters)?:
      receiver.deliver(answer)
      for waiter in waiters { waiter.resume() }
    case .forwarding(let request, let receiver)?:
      guard case .forward(let session) = answering else { return }
      forward(task, request, receiver, to: session, core: forwardCore)
    case let start?:
      if answersFromStubs { return answerFromStubs(task, start) }
      switch answering {
      case .stubs: answerFromStubs(task, start)
      case .forward(let session): forward(task, to: session, site: ownerSite)
      case .hold(let held): hold(task, in: held)
      }
    }
  }

  /// The answer of `claim`'s stub when it needs no work at all: a listed response, due at
  /// once, not dribbled, not a redirect to follow, and already built for this request's URL.
  /// Runs no user code and builds nothing, so it may run under the lock.
  /// The stub keeps the answer in its usage, so that from the second request on reading it
  /// takes no lock besides the core's.
  private static func readyAnswer(
    _ claim: StubTable.Claim, for task: MockTask, in stubs: inout StubTable
  ) -> Answer? {
    guard case .sequence(let responses) = claim.definition.responder, !responses.isEmpty else {
      return nil
    }
    let index = claim.responseIndex(among: responses.count)
    let response = responses[index]
    guard response.isImmediate, response.dribble == nil,
      !(response.isRedirect && task.door.followsRedirects)
    else { return nil }
    // The same answer for every request: no need to read the request's URL and method.
    if let fixed = response.storage.fixedAnswer { return fixed }
    guard let url = claim.sentURL ?? task.originalRequest.url else { return nil }
    let isHead = task.originalRequest.isHead
    let id = claim.definition.id
    if let ready = stubs.usage.read(id, { $0.ready }) ?? nil, ready.index == index,
      ready.isHead == isHead, ready.url == url
    {
      return ready.answer
    }
    guard let answer = response.builtAnswer(for: url, isHead: isHead) else { return nil }
    stubs.usage.update(id) {
      $0.ready = StubTable.ReadyAnswer(index: index, url: url, isHead: isHead, answer: answer)
    }
    return answer
  }

  private func answerFromStubs(_ task: MockTask, _ start: Start) {
    var request = task.originalRequest
    var routed: StubTable.Claim?
    switch start {
    case .routed(let claim): routed = claim
    case .undecided: routed = route(request)
    case .answered, .forwarding: return
    }
    var delay = Duration.zero
    var hop = 0
    while true {
      // 2. Route.
      guard let claim = routed else { return answerUnmatched(task, request, after: delay) }
      // 3. Build the answer.
      let definition = claim.definition
      let response: StubResponse
      switch definition.responder {
      case .sequence(let responses):
        guard !responses.isEmpty else {
          return failInvalid(task, request, "The stub has no responses.", site: definition.site)
        }
        response = responses[claim.responseIndex(among: responses.count)]
      case .dynamic(let build):
        response = build(request, claim.parameters)
      }
      let answer: Answer
      switch response.resolve(for: request) {
      case .invalid(let problem):
        return failInvalid(task, request, problem, site: definition.site)
      case .answer(let built):
        answer = built
      case .webSocket:
        answer = webSocketAnswer(of: response, to: task, request, site: definition.site)
      }
      delay += response.delay(forCall: claim.callNumber)
      // A redirect the door follows is one more request, recorded and routed like any other.
      if response.isRedirect, task.door.followsRedirects,
        let next = Redirect.request(following: answer, to: request)
      {
        guard hop < Redirect.maximumHops else {
          let error = URLError(
            .httpTooManyRedirects, for: request,
            description: "more than \(Redirect.maximumHops) redirects")
          return schedule(Answer(error: error), to: task, request, after: delay, stub: definition)
        }
        routed = followRedirect(task, from: request, to: next, answer: answer, stub: definition)
        request = next
        hop += 1
        continue
      }
      // 4. Schedule, 5. deliver.
      return send(answer, of: response, to: task, request, after: delay, stub: definition)
    }
  }

  /// Finds the newest stub that matches `request` and may answer now, and counts the call:
  /// in one critical region when no matcher holds user code, else matching outside the lock.
  private func route(_ request: URLRequest) -> StubTable.Claim? {
    let registry = state.withLock { state -> StubTable.Registry? in
      state.stubs.needsMatchingOutsideTheLock ? state.stubs.registry : nil
    }
    guard let registry else {
      return state.withLock { $0.stubs.claimFirstMatch(request) }
    }
    let matches = registry.allMatches(request)
    if matches.isEmpty { return nil }
    return state.withLock { $0.stubs.claimFirst(of: matches) }
  }

  /// Records a redirect hop (its answer, then the follow-up request) and routes the follow-up
  /// in the same critical region when it can.
  private func followRedirect(
    _ task: MockTask, from request: URLRequest, to next: URLRequest, answer: Answer,
    stub: StubTable.Definition
  ) -> StubTable.Claim? {
    let exchange = Exchange(
      taskIdentifier: task.taskIdentifier, request: request, answer: answer, stub: stub,
      door: task.door)
    let claim = state.withLock { state -> StubTable.Claim?? in
      state.records.recordHop(exchange)
      state.records.recordSent(next, taskIdentifier: task.taskIdentifier)
      task.redirectLocked(to: next)
      guard !state.stubs.needsMatchingOutsideTheLock else { return .none }
      return .some(state.stubs.claimFirstMatch(next))
    }
    if let claim { return claim }
    return route(next)
  }

  private func answerUnmatched(_ task: MockTask, _ request: URLRequest, after delay: Duration) {
    let (policy, table, redaction) = state.withLock {
      state -> (UnmatchedRequestPolicy.Kind, StubTable?, ReportRedaction) in
      let policy = state.policy.kind
      if case .fail = policy {
        state.records.recordUnmatched(
          request, taskIdentifier: task.taskIdentifier, reported: true)
        return (policy, state.stubs, state.reportRedaction)
      }
      state.records.recordUnmatched(
        request, taskIdentifier: task.taskIdentifier, reported: false)
      return (policy, nil, state.reportRedaction)
    }
    switch policy {
    case .fail:
      // A URLProtocol never sees an upload task's body: the report says so when it matters.
      let bodyUnseen = task.door == .urlProtocol && task.kind == .upload && request.httpBody == nil
      let report = NearMiss.unmatchedReport(
        request, table?.nearMisses(for: request, redacting: redaction) ?? [],
        bodyUnseen: bodyUnseen, door: task.door, voice: voice, redaction: redaction)
      reporter.fail(report, at: ownerSite)
      let error = URLError(
        .resourceUnavailable, for: request,
        description: "URLSessionMock: no stub matches \(request.summary)")
      let answer = Answer(unmatched: UnmatchedAnswer(report: report, error: error))
      schedule(answer, to: task, request, after: .zero, stub: nil)
    case .respond(let response):
      let answer: Answer
      switch response.resolve(for: request) {
      case .invalid(let problem):
        return failInvalid(task, request, problem, site: ownerSite)
      case .answer(let built):
        answer = built
      case .webSocket:
        answer = webSocketAnswer(of: response, to: task, request, site: ownerSite)
      }
      let delay = delay + (response.delay ?? .zero)
      send(answer, of: response, to: task, request, after: delay, stub: nil)
    case .passThrough(let session):
      forward(task, to: session, site: ownerSite)
    }
  }

  /// What a WebSocket script answers `task`: the upgrade, with the connection the script
  /// runs, for a WebSocket task; `426 Upgrade Required` for any other request.
  private func webSocketAnswer(
    of response: StubResponse, to task: MockTask, _ request: URLRequest, site: CallSite
  ) -> Answer {
    guard task.kind == .webSocket, let script = response.webSocketScript,
      let head = StubResponse.upgradeResponse(for: request, subprotocol: script.subprotocol)
    else { return StubResponse.upgradeRequired(for: request) }
    let conversation = WebSocketConversation(
      subprotocol: script.subprotocol, steps: script.steps, scheduler: scheduler,
      reporter: reporter, site: site, summary: request.summary)
    return Answer(upgrade: head, conversation)
  }

  private func failInvalid(
    _ task: MockTask, _ request: URLRequest, _ problem: String, site: CallSite
  ) {
    reporter.fail(
      "The stub registered here cannot answer \(request.summary): \(problem)", at: site)
    let error = URLError(.resourceUnavailable, for: request, description: problem)
    schedule(Answer(error: error), to: task, request, after: .zero, stub: nil)
  }

  /// Delivers `answer`, the resolved answer of `response`: in parts when the response dribbles
  /// its body, else whole.
  private func send(
    _ answer: Answer, of response: StubResponse, to task: MockTask, _ request: URLRequest,
    after delay: Duration, stub: StubTable.Definition?
  ) {
    if let dribble = response.dribble, let data = answer.data, answer.error == nil,
      let plan = DribblePlan(body: data, dribble)
    {
      return stream(answer, plan, to: task, request, after: delay, stub: stub)
    }
    schedule(answer, to: task, request, after: delay, stub: stub)
  }

  /// Delivers `answer` now, or on the clock after `delay`; an answer later than the request's
  /// `timeoutInterval` fails with `URLError(.timedOut)` at that time instead, as URLSession's
  /// would.
  private func schedule(
    _ answer: Answer, to task: MockTask, _ request: URLRequest, after delay: Duration,
    stub: StubTable.Definition?
  ) {
    guard delay > .zero else {
      complete(task, with: answer, stub: stub, yieldingToCancel: true, settlingResume: true)
      return
    }
    let timeout = Duration.seconds(request.timeoutInterval)
    let timesOut = request.timeoutInterval > 0 && delay > timeout
    let (answer, delay) =
      timesOut ? (Answer(error: URLError(timedOutFor: request)), timeout) : (answer, delay)
    if scheduler.runsInRealTimeByDefault { warnAboutRealTime(delay, site: stub?.site ?? ownerSite) }
    let undo = scheduler.schedule(after: delay) { [self] stalled in
      let answer = stalled ? Self.stalledAnswer(for: request) : answer
      complete(task, with: answer, stub: stub, yieldingToCancel: true)
    }
    guard let undo else {
      return clockReleased(task, request, stub: stub, after: delay, settlingResume: true)
    }
    setCancelPending(task, undo, settlingResume: true)
  }

  // MARK: - Streamed answers (a dribbled body)

  /// Delivers `answer` in parts on the clock: the head after `delay`, then each piece of `plan`
  /// at its time after the head, then the end. The request's `timeoutInterval` counts the
  /// whole: a stream still going at the timeout fails with `URLError(.timedOut)` then.
  private func stream(
    _ answer: Answer, _ plan: DribblePlan, to task: MockTask, _ request: URLRequest,
    after delay: Duration, stub: StubTable.Definition?
  ) {
    var plan = plan
    if request.timeoutInterval > 0 {
      let timeout = Duration.seconds(request.timeoutInterval)
      // Too late for the head as well: the delayed answer's timeout path.
      guard delay <= timeout else {
        return schedule(answer, to: task, request, after: delay, stub: stub)
      }
      plan.cut(at: timeout - delay)
    }
    let log = PieceLog(since: scheduler.now())
    state.withLock { _ in task.streamLocked(recordingPiecesIn: log) }
    let streaming = Streaming(
      task: task, request: request, answer: answer, plan: plan, stub: stub, log: log)
    let duration = plan.failsAt ?? plan.pieces.last?.offset ?? .zero
    if scheduler.runsInRealTimeByDefault, max(delay, duration) > .zero {
      warnAboutRealTime(max(delay, duration), site: stub?.site ?? ownerSite)
    }
    if delay > .zero {
      schedule(streaming, part: -1, after: delay)
    } else {
      streamParts(streaming, from: -1)
    }
    // Settled once the head is delivered or scheduled, as a delayed answer is.
    settleResume()
  }

  /// A streamed answer on its way: what ``streamParts(_:from:)`` needs at each step.
  private struct Streaming: Sendable {
    let task: MockTask
    let request: URLRequest
    let answer: Answer
    let plan: DribblePlan
    let stub: StubTable.Definition?
    /// The pieces delivered so far, with their times: the exchange records them.
    let log: PieceLog

    /// The time of part `index` after the head: the head is part -1, at zero.
    func offset(of index: Int) -> Duration {
      index < 0 ? .zero : plan.pieces[index].offset
    }
  }

  /// Delivers the parts due now, from `index` (-1 is the head), then schedules the next one
  /// on the clock, or ends the exchange after the last.
  private func streamParts(_ streaming: Streaming, from index: Int) {
    let task = streaming.task
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
      if wait > .zero {
        schedule(streaming, part: next, after: wait)
        return
      }
      index = next
    }
    if let failsAt = streaming.plan.failsAt {
      // Cut by the request's timeout: the stream fails then.
      let error = Answer(error: URLError(timedOutFor: streaming.request))
      let wait = failsAt - streaming.offset(of: index)
      guard wait > .zero else {
        complete(task, with: error, stub: streaming.stub, yieldingToCancel: true)
        return
      }
      let undo = scheduler.schedule(after: wait) { [self] stalled in
        guard !stalled else { return self.stalled(streaming) }
        complete(task, with: error, stub: streaming.stub, yieldingToCancel: true)
      }
      guard let undo else {
        return clockReleased(streaming.task, streaming.request, stub: streaming.stub, after: wait)
      }
      setCancelPending(task, undo)
      return
    }
    complete(
      task, with: streaming.answer, stub: streaming.stub, yieldingToCancel: true, endOnly: true)
  }

  /// Schedules part `index` of a stream after `wait`; when the clock is gone, the exchange
  /// fails at once.
  private func schedule(_ streaming: Streaming, part index: Int, after wait: Duration) {
    let undo = scheduler.schedule(after: wait) { [self] stalled in
      guard !stalled else { return self.stalled(streaming) }
      streamParts(streaming, from: index)
    }
    guard let undo else {
      return clockReleased(streaming.task, streaming.request, stub: streaming.stub, after: wait)
    }
    setCancelPending(streaming.task, undo)
  }

  /// The stall watchdog ended a stream's next step: the exchange fails with a timeout.
  private func stalled(_ streaming: Streaming) {
    complete(
      streaming.task, with: Self.stalledAnswer(for: streaming.request), stub: streaming.stub,
      yieldingToCancel: true)
  }

  /// What a delivery that the stall watchdog ended answers: a timeout that says why.
  private static func stalledAnswer(for request: URLRequest) -> Answer {
    let message = "URLSessionMock: nothing advanced the VirtualClock to this answer"
    return Answer(error: URLError(.timedOut, for: request, description: message))
  }

  /// A delivery (a whole answer or a stream's next step) cannot be scheduled: its VirtualClock
  /// is gone, so nothing could ever advance it. The test hears why; the request times out.
  private func clockReleased(
    _ task: MockTask, _ request: URLRequest, stub: StubTable.Definition?, after wait: Duration,
    settlingResume: Bool = false
  ) {
    reporter.fail(
      "\(request.summary) is answered after \(wait) on a VirtualClock that no longer exists, "
        + "so nothing can ever advance it; the request fails with URLError(.timedOut). Keep "
        + "the clock for as long as the test runs.", at: stub?.site ?? ownerSite)
    let error = URLError(.timedOut, for: request, description: "its VirtualClock was released")
    complete(task, with: Answer(error: error), stub: stub, settlingResume: settlingResume)
  }

  /// Runs `part` with the task's sink lent out, unless the task has ended or a cancel is under
  /// way; returns whether the stream goes on. A cancel that begins while the sink is out leaves
  /// its end to this call, which delivers it when the part returns.
  private func lendSink(of task: MockTask, _ part: (any ResponseSink) -> Void) -> Bool {
    guard let sink = state.withLock({ _ in task.lendSinkLocked() }) else { return false }
    part(sink)
    guard state.withLock({ _ in task.returnSinkLocked() }) else {
      complete(task, with: Answer(error: URLError(cancelledFor: task.currentRequest)), stub: nil)
      return false
    }
    return true
  }

  /// Hands the task to `session`; what that session answers is delivered as it is, and a
  /// cancel is passed on for that session to deliver.
  private func forward(_ task: MockTask, to session: any HTTPSession, site: CallSite) {
    guard task.kind != .webSocket else {
      // A WebSocket's messages cannot pass through a data task's relay.
      let error = URLError(
        .unsupportedURL, for: task.currentRequest,
        description: "\(ownerName) cannot pass a WebSocket through to another session; stub it")
      complete(task, with: Answer(error: error), stub: nil, settlingResume: true)
      return
    }
    guard Forwarding.depth(of: task) < Forwarding.maximumDepth else {
      let request = task.currentRequest
      reporter.fail(
        "\(request.summary) was forwarded \(Forwarding.maximumDepth) times in a row: this "
          + "\(ownerName) leads back to itself (directly, through a SpySession, or through an "
          + "unmatched-request policy). Forward to a different session.", at: site)
      let error = URLError(
        .resourceUnavailable, for: request,
        description: "forwarded \(Forwarding.maximumDepth) times in a row: a loop of sessions")
      complete(task, with: Answer(error: error), stub: nil, settlingResume: true)
      return
    }
    let (request, receiver) = state.withLock { _ in
      (task.currentRequestLocked, task.takeSinkForForwardingLocked())
    }
    forward(task, request, receiver, to: session, core: Forwarding.core(of: session))
  }

  /// Forwards `task`, whose request and receiver have been taken, to `session`, whose core is
  /// `core` when it is one of our doubles.
  ///
  /// The task's receiver moves into a ``ForwardRelay``, which the wrapped task answers into:
  /// the relay records the exchange and completes the task. The task holds the wrapped task
  /// until then, to pass a cancel on.
  private func forward(
    _ task: MockTask, _ request: URLRequest, _ receiver: Receiver?, to session: any HTTPSession,
    core: SessionCore?
  ) {
    guard let receiver else {
      settleResume()  // a cancel came first and has delivered
      return
    }
    let relay = ForwardRelay(for: task, request, receiver, in: self)
    let depth = Forwarding.depth(of: task) + 1
    guard let core else {
      let inner = Forwarding.makeTask(task.kind, request, in: session, relay: relay.handler)
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
    let (runNow, waiters) = state.withLock { state in
      relay.endResumeLocked()
      let stored = task.setCancelPendingLocked(.action(cancel))
      return (!stored && task.isCancelingLocked, state.settle())
    }
    if runNow { cancel() }
    for waiter in waiters { waiter.resume() }
  }

  private func hold(_ task: MockTask, in held: WeakReference<HeldTasks>) {
    held.object?.hold(task)
    settleResume()
  }

  // MARK: - Delivery

  /// Runs the task's sink with this answer, unless it has already run; returns whether it ran.
  ///
  /// With `yieldingToCancel`, it does not run either once a `cancel()` has begun: the double
  /// that delivers its own answer (a stub's, a test's) lets that cancel deliver
  /// `URLError(.cancelled)`. With `settlingResume`, the resume that led here is settled in the
  /// same critical region, and its waiters are woken after the sink.
  /// With `endOnly`, the sink has had the head and the body already (a streamed answer) and
  /// gets only the end.
  @discardableResult
  func complete(
    _ task: MockTask, with answer: Answer, stub: StubTable.Definition?,
    yieldingToCancel: Bool = false, settlingResume: Bool = false, endOnly: Bool = false
  ) -> Bool {
    let (sink, waiters) = state.withLock {
      state -> (Receiver?, [CheckedContinuation<Void, any Error>]) in
      let waiters = settlingResume ? state.settle() : []
      guard let sink = task.takeSinkLocked(yieldingToCancel: yieldingToCancel) else {
        return (nil, waiters)
      }
      finishLocked(task, answer, stub: stub, for: sink, in: &state)
      return (sink, waiters)
    }
    if let sink {
      if endOnly { sink.finish(answer) } else { sink.deliver(answer) }
    }
    for waiter in waiters { waiter.resume() }
    return sink != nil
  }

  /// Marks `task` completed and records its exchange, which a door's sink (`receiver`) hears
  /// of first.
  private func finishLocked(
    _ task: MockTask, _ answer: Answer, stub: StubTable.Definition?, for receiver: Receiver,
    in state: inout State
  ) {
    task.finishLocked(answer)
    let exchange: Exchange
    if let log = task.pieceLogLocked {
      // A streamed body's exchange lists the pieces delivered, however the stream ended.
      exchange = Exchange(
        taskIdentifier: task.taskIdentifier, request: task.currentRequestLocked,
        answer: answer.delivered(in: log.pieces), stub: stub, door: task.door)
    } else {
      exchange = Exchange(
        taskIdentifier: task.taskIdentifier, request: task.currentRequestLocked, answer: answer,
        stub: stub, door: task.door)
    }
    receiver.recorded(exchange)
    state.records.recordCompleted(exchange)
  }

  /// Cancels the task: its sink gets `URLError(.cancelled)` unless it has already run; a
  /// forwarded task's cancel goes to the session that answers it.
  func cancel(_ task: MockTask) {
    let pending = state.withLock {
      state -> (wasRunning: Bool, forwarded: Bool, undo: PendingCancel?)? in
      guard let pending = task.beginCancelLocked() else { return nil }
      state.records.recordCancelled(task.currentRequestLocked, taskIdentifier: task.taskIdentifier)
      return pending
    }
    guard let pending else { return }
    pending.undo?.run()
    if pending.forwarded { return }
    if case .hold(let held) = answering { held.object?.release(task) }
    complete(task, with: Answer(error: URLError(cancelledFor: task.currentRequest)), stub: nil)
  }

  /// Stores what undoes the pending delivery; runs it at once if the task was cancelled first.
  /// With `settlingResume`, the resume that scheduled the delivery is settled in the same
  /// critical region, and its waiters are woken last.
  private func setCancelPending(
    _ task: MockTask, _ undo: PendingCancel, settlingResume: Bool = false
  ) {
    let (runNow, waiters) = state.withLock { state in
      (!task.setCancelPendingLocked(undo), settlingResume ? state.settle() : [])
    }
    if runNow { undo.run() }
    for waiter in waiters { waiter.resume() }
  }

  /// Wakes `waitForRequests` once the answer is scheduled (or forwarded, or held), so that a
  /// test that wakes up can advance the clock at once.
  private func settleResume() {
    for waiter in state.withLock({ $0.settle() }) { waiter.resume() }
  }

  /// Warns once per double that a delay takes real time because the double has no clock.
  private func warnAboutRealTime(_ delay: Duration, site: CallSite) {
    let first = state.withLock { state -> Bool in
      defer { state.warnedAboutRealTimeDelay = true }
      return !state.warnedAboutRealTimeDelay
    }
    guard first else { return }
    let message =
      "This stub's answer is delayed by \(delay) of real time: the \(ownerName) created at "
      + "\(ownerSite) has no clock, so it waits on ContinuousClock. To control the delay from "
      + "the test, create the mock with URLSessionMock(clock: clock) and advance that "
      + "VirtualClock; pass clock: ContinuousClock() to mean real time."
    reporter.warn(message, at: site)
  }
}
