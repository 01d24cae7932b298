import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The one request path behind every double and every door.
///
/// A ``URLSessionMock`` and a ``SpySession`` each own one core. It holds the double's whole
/// mutable state (records, the life of its tasks, the stub table and scenario state, waiters)
/// behind one lock, and runs every request the same way in ``resume(_:)``: it decides
/// (record → route → resolve the answer → follow redirects), which gives a ``Plan``, then
/// carries the plan out (timeouts, the clock, reports, delivery). How the double answers is
/// the core's ``Answering`` strategy: from stubs (a mock), by forwarding to a wrapped session,
/// or by holding the task for the test (a spy). The doors (the injected `HTTPSession` methods,
/// the URLProtocol bridge, the loopback server) only translate: each makes a task with a
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
    /// Exchanges recorded as ended (completed, failed, cancelled), every one since the double
    /// was made: `waitForExchanges` counts these.
    var endedCount = 0
    var endWaiters: [ObjectIdentifier: Waiter] = [:]
    /// Whether the mock has warned that its delays take real time (it does so once).
    var warnedAboutRealTimeDelay = false
    /// Which header values the double's reports mask.
    var reportRedaction = ReportRedaction.default
    /// How much work matching one request may take (see ``MatchBudget``).
    var matchLimits = MatchLimits()
    /// What a regular expression matched under a budget calls as it reports progress (tests
    /// act while a slow match runs); `nil` in use.
    var matchProbe: (@Sendable () -> Void)?
    /// What ends a call that waits on a WebSocket task never resumed.
    var resumeWatchdog = ResumeWatchdog()
    /// The longest a whole transfer may take (``URLSessionMock/resourceTimeout``).
    var resourceTimeout: Duration?
    /// Whether ``resume(_:)`` decides what it can in the critical region that records the
    /// request (see `shortcut`); tests turn it off to compare with the long way.
    var takesShortcuts = true

    /// Counts one sent request as settled; returns the waiters this satisfies, to resume
    /// outside the lock.
    // Inlined, with the waiters' work out of line: on every request, a call of its own cost
    // about 55 instructions (`mock` benchmark).
    @inline(__always)
    mutating func settle() -> Wakeups {
      settledCount += 1
      guard !waiters.isEmpty else { return .none }
      return Self.takeMet(from: &waiters, count: settledCount)
    }

    /// Records a task's completion and the exchange that ended it, and counts it as ended;
    /// returns the waiters this satisfies, to resume outside the lock.
    // Inlined, as `settle()` is: a call of its own cost about 55 instructions a request.
    @inline(__always)
    mutating func recordEnded(_ exchange: consuming Exchange) -> Wakeups {
      records.recordCompleted(exchange)
      endedCount += 1
      guard !endWaiters.isEmpty else { return .none }
      return Self.takeMet(from: &endWaiters, count: endedCount)
    }

    /// Removes the waiters whose count `count` meets, and returns them.
    @inline(never)
    private static func takeMet(
      from waiters: inout [ObjectIdentifier: Waiter], count: Int
    ) -> Wakeups {
      let met = waiters.filter { $0.value.count <= count }
      for key in met.keys { waiters[key] = nil }
      return Wakeups(met.values.map(\.continuation))
    }
  }

  let answering: Answering
  /// Whether ``answering`` is `.stubs`, read on every request without copying the strategy.
  let answersFromStubs: Bool
  /// When ``answering`` forwards to one of our doubles, that double's core: a forward then
  /// makes its task there directly (see ``Forwarding``).
  let forwardCore: SessionCore?
  /// The kind of double, for messages: `URLSessionMock`, `SpySession`.
  let ownerName: String
  /// Where the double was created: unmatched requests are reported here.
  let ownerSite: CallSite
  /// How the double's reports speak of it and of what to do.
  let voice: ReportVoice
  let reporter: FailureReporter
  /// The reporter and the site, for the relays of this double's forwards.
  let secondAnswerReport: SecondAnswerReport
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
    self.secondAnswerReport = SecondAnswerReport(reporter: reporter, site: ownerSite)
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

  /// The one way in for every door: creates a suspended task for `request`, which came through
  /// a door with these `traits`, whose answer goes to `receiver`. The injected door hands the
  /// task to the code under test, which resumes it; the other doors resume it at once
  /// (``URLSessionMock/send(_:kind:door:to:)``) or refuse it (``refuse(_:answering:)``).
  func enter(
    _ request: URLRequest, kind: SessionEvent.TaskKind, through traits: DoorTraits,
    receiver: Receiver, forwardDepth: Int = 0
  ) -> MockTask {
    let (identifier, resource) = state.withLock {
      ($0.records.recordCreated(request, kind: kind), $0.resourceTimeout)
    }
    // The time limits are worked out when a delay needs them (``MockTask/limits``).
    return MockTask(
      core: self, taskIdentifier: identifier, request: request, kind: kind, traits: traits,
      receiver: receiver, forwardDepth: forwardDepth, resourceTimeout: resource)
  }

  /// The longest a whole transfer may take; `nil` for no limit.
  var resourceTimeout: Duration? {
    get { state.withLock { $0.resourceTimeout } }
    set { state.withLock { $0.resourceTimeout = newValue } }
  }

  /// Answers `task` with `answer` without routing it: a door's own refusal of a request it
  /// cannot carry (a body too large to read, a kind of task it cannot serve, a WebSocket
  /// upgrade it cannot accept). The request is recorded as sent and the refusal as its
  /// exchange, so that the journal holds every answer a door gives.
  func refuse(_ task: MockTask, answering answer: Answer) {
    let started = state.withLock { state -> Bool in
      guard state.start(task) else { return false }
      state.records.recordSent(task.originalRequest, taskIdentifier: task.taskIdentifier)
      return true
    }
    guard started else { return }
    complete(task, with: answer, stub: nil, settlingResume: true)
  }

  // MARK: - The path of a request

  /// What was decided while the resume was recorded.
  enum Start {
    /// Nothing yet: routing runs matchers from the test, so it happens outside the lock.
    case undecided
    /// Routing ran inside the lock: this stub answers, or none (`nil`) does.
    case routed(StubTable.Claim?)
    /// The whole request ran inside the lock (see ``resume(_:)``): the sink to deliver to,
    /// and the waiters to wake after it.
    case answered(Receiver, Answer, Wakeups)
    /// A forwarding double took the task's request and receiver in the same critical region
    /// (`nil`: a cancel came first and has delivered).
    case forwarding(URLRequest, Receiver?)
  }

  /// Sends `task`'s request: decides what answers it (record → route → resolve → follow
  /// redirects), then carries that ``Plan`` out (schedule → deliver).
  ///
  /// The common case is decided in one critical region: a table without matcher closures is
  /// routed and its stub claimed where the request is recorded, and when that stub's answer is
  /// due at once and already built for this URL (as it is from the second request on), the
  /// task is finished and its exchange recorded there too; carrying that out is the delivery
  /// to the sink, outside the lock. Every other request goes the long way: the rest of the
  /// decision in `SessionCore+Decide.swift`, then ``carryOut(_:for:)``.
  func resume(_ task: MockTask) {
    // 1. Record: the task runs and its request is sent. A table without matcher closures is
    //    routed and its stub claimed in the same critical region.
    let start = state.withLock { state -> Start? in
      guard state.start(task) else { return nil }
      state.records.recordSent(task.originalRequest, taskIdentifier: task.taskIdentifier)
      return shortcut(task, in: &state)
    }
    switch consume start {
    case nil: return
    case .answered(let receiver, let answer, let waiters)?:
      receiver.deliver(answer)
      waiters.wake()
    case .forwarding(let request, let receiver)?:
      guard case .forward(let session) = answering else { return }
      forward(task, request, receiver, to: session, core: forwardCore)
    case .routed(let claim)?:
      carryOut(decideFromStubs(task, claim), for: task)
    case .undecided?:
      carryOut(decide(task), for: task)
    }
  }

  /// How far the critical region that records `task`'s request may decide it: the one place
  /// that owns the fast path's conditions. The long way (``decide(_:)``, then
  /// ``carryOut(_:for:)``) reaches the same plan for every request; the shortcut only saves
  /// critical regions and the building of a plan, which `SessionCoreShortcutTests` checks by
  /// running the same requests with ``State/takesShortcuts`` on and off.
  ///
  /// A forwarding double forwards here when ``forwardBar(for:)`` allows it. A table without
  /// matcher closures is routed here; when the stub's answer needs no step after it
  /// (``readyAnswer(_:for:in:)``), the task is finished and its exchange recorded here too.
  @inline(__always)  // On every request: a call of its own cost about 60 instructions.
  private func shortcut(_ task: MockTask, in state: inout State) -> Start {
    guard state.takesShortcuts else { return .undecided }
    guard answersFromStubs else {
      guard case .forward = answering, Self.forwardBar(for: task) == nil else {
        return .undecided
      }
      return .forwarding(state.currentRequest(of: task), state.takeSinkForForwarding(of: task))
    }
    guard !state.stubs.needsMatchingOutsideTheLock else { return .undecided }
    guard let claim = state.stubs.claimFirstMatch(task.originalRequest) else {
      return .routed(nil)
    }
    guard let answer = Self.readyAnswer(claim, for: task, in: &state.stubs),
      let sink = state.takeSink(of: task, yieldingToCancel: true)
    else { return .routed(claim) }
    let ended = finishLocked(task, answer, stub: claim.definition, for: sink, in: &state)
    return .answered(sink, answer, state.settle() + ended)
  }

  /// Whether `response`, a stub's answer to `task`, is delivered as soon as it is built: due at
  /// once, not dribbled, and not a redirect that the door follows. ``readyAnswer(_:for:in:)``
  /// takes only such a response; ``decideFromStubs(_:_:overrun:)`` delivers such a response
  /// without another step.
  @inline(__always)  // On every request: a call of its own cost about 60 instructions.
  static func isDeliveredAsBuilt(_ response: StubResponse, to task: MockTask) -> Bool {
    response.isImmediate && !response.isDribbled
      && !(response.isRedirect && task.traits.followsRedirects)
  }

  /// Why `task` cannot be passed to another session, or `nil` when it can.
  enum ForwardBar {
    /// A WebSocket's messages cannot pass through a data task's relay.
    case webSocket
    /// The task has been forwarded ``Forwarding/maximumDepth`` times in a row.
    case loop
  }

  /// Why `task` cannot be passed to another session, or `nil` when it can: read by the
  /// shortcut and by the long way's forward alike.
  @inline(__always)  // On every request: a call of its own cost about 60 instructions.
  static func forwardBar(for task: MockTask) -> ForwardBar? {
    if task.kind == .webSocket { return .webSocket }
    if Forwarding.depth(of: task) >= Forwarding.maximumDepth { return .loop }
    return nil
  }

  /// The answer of `claim`'s stub when it needs no work at all: a listed response, due at
  /// once, not dribbled, not a redirect to follow, and already built for this request's URL.
  /// Runs no user code and builds nothing, so it may run under the lock.
  /// The stub keeps the answer in its usage, so that from the second request on reading it
  /// takes no lock besides the core's.
  static func readyAnswer(
    _ claim: StubTable.Claim, for task: MockTask, in stubs: inout StubTable
  ) -> Answer? {
    guard case .sequence(let responses) = claim.definition.responder, !responses.isEmpty else {
      return nil
    }
    let index = claim.responseIndex(among: responses.count)
    // The response is read in place, not copied out of the array: a copy (its value
    // witnesses) and its destruction cost over 100 instructions a request (`mock`).
    guard isDeliveredAsBuilt(responses[index], to: task) else { return nil }
    // The same answer for every request: no need to read the request's URL and method.
    if let fixed = responses[index].storage.fixedAnswer { return fixed }
    guard let url = claim.sent?.url ?? task.originalRequest.url else { return nil }
    let isHead = task.originalRequest.isHead
    let id = claim.definition.id
    if let ready = stubs.usage.read(id, { $0.ready }) ?? nil, ready.index == index,
      ready.isHead == isHead, ready.url == url
    {
      return ready.answer
    }
    guard let answer = responses[index].builtAnswer(for: url, isHead: isHead) else { return nil }
    stubs.usage.update(id) {
      $0.ready = StubTable.ReadyAnswer(index: index, url: url, isHead: isHead, answer: answer)
    }
    return answer
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
      state -> (Receiver?, Wakeups) in
      let waiters = settlingResume ? state.settle() : .none
      guard let sink = state.takeSink(of: task, yieldingToCancel: yieldingToCancel) else {
        return (nil, waiters)
      }
      let ended = finishLocked(task, answer, stub: stub, for: sink, in: &state)
      return (sink, waiters + ended)
    }
    if let sink {
      if endOnly { sink.finish(answer) } else { sink.deliver(answer) }
    }
    waiters.wake()
    return sink != nil
  }

  /// Marks `task` completed and records its exchange, which a door's sink (`receiver`) hears
  /// of first; returns the `waitForExchanges` waiters to wake once out of the lock, after the
  /// sink.
  func finishLocked(
    _ task: MockTask, _ answer: Answer, stub: StubTable.Definition?, for receiver: Receiver,
    in state: inout State
  ) -> Wakeups {
    state.finish(task, answer)
    let request = state.currentRequest(of: task)
    let exchange: Exchange
    if let log = state.pieceLog(of: task) {
      // A streamed body's exchange lists the pieces delivered, however the stream ended.
      exchange = Exchange(
        taskIdentifier: task.taskIdentifier, request: request,
        answer: answer.delivered(in: log.pieces), stub: stub, door: task.door)
    } else {
      exchange = Exchange(
        taskIdentifier: task.taskIdentifier, request: request, answer: answer, stub: stub,
        door: task.door)
    }
    receiver.recorded(exchange)
    return state.recordEnded(exchange)
  }

  /// Cancels the task: its sink gets `URLError(.cancelled)` unless it has already run; a
  /// forwarded task's cancel goes to the session that answers it.
  func cancel(_ task: MockTask) {
    let pending = state.withLock {
      state -> (forwarded: Bool, undo: PendingCancel?)? in
      guard let pending = state.beginCancel(task) else { return nil }
      state.records.recordCancelled(
        state.currentRequest(of: task), taskIdentifier: task.taskIdentifier)
      return pending
    }
    guard let pending else { return }
    pending.undo?.run()
    if pending.forwarded { return }
    if case .hold(let held) = answering { held.object?.release(task) }
    complete(task, with: Answer(cancelling: task.currentRequest), stub: nil)
  }

  /// Stores what undoes the pending delivery; runs it at once if the task was cancelled first.
  /// With `settlingResume`, the resume that scheduled the delivery is settled in the same
  /// critical region, and its waiters are woken last.
  func setCancelPending(
    _ task: MockTask, _ undo: PendingCancel, settlingResume: Bool = false
  ) {
    let (runNow, waiters) = state.withLock { state in
      (!state.setCancelPending(task, undo), settlingResume ? state.settle() : .none)
    }
    if runNow { undo.run() }
    waiters.wake()
  }

  /// Wakes `waitForRequests` once the answer is scheduled (or forwarded, or held), so that a
  /// test that wakes up can advance the clock at once.
  func settleResume() {
    state.withLock { $0.settle() }.wake()
  }

  /// Warns once per double that a delay takes real time because the double has no clock.
  func warnAboutRealTime(_ delay: Duration, site: CallSite) {
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
