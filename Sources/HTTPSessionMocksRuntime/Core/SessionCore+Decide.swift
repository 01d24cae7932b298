import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The first step of a request, after the critical region in `resume` that records it: route →
// resolve the answer → follow redirects, which gives a ``Plan``. Only user code (matcher and
// response closures) runs outside the lock here; nothing is delivered and nothing reported.
extension SessionCore {
  /// The rest of the decision for `task`, when the critical region that started it could
  /// not route it (a matcher runs code from the test, or the double does not answer from
  /// stubs).
  func decide(_ task: MockTask) -> Plan {
    switch answering {
    case .stubs:
      let routed = route(task.originalRequest)
      return decideFromStubs(task, routed.claim, overrun: routed.overrun)
    case .forward(let session):
      return forward(task, task.originalRequest, to: session, site: ownerSite)
    case .hold(let held): return .hold(held)
    }
  }

  /// 2. Route, 3. resolve the answer, and follow the redirects that the door follows: each hop
  /// is one more request, recorded and routed like any other.
  /// A request whose matching overran its budget (`overrun`) fails with a report naming the
  /// pattern.
  func decideFromStubs(
    _ task: MockTask, _ first: consuming StubTable.Claim?, overrun: MatchBudget.Overrun? = nil
  ) -> Plan {
    var request = task.originalRequest
    var routed = consume first
    var overrun = overrun
    var delay = Duration.zero
    var hop = 0
    while true {
      guard let claim = routed else {
        return decideUnmatched(task, request, after: delay, overrun: overrun)
      }
      let definition = claim.definition
      let context = Plan.Context(request: request, stub: definition)
      let response: StubResponse
      switch definition.responder {
      case .sequence(let responses):
        guard !responses.isEmpty else {
          return invalid("The stub has no responses.", context)
        }
        response = responses[claim.responseIndex(among: responses.count)]
      case .dynamic(let build):
        response = build(request, claim.parameters)
      }
      let answer: Answer
      switch resolve(response, for: task, context, sent: claim.sent) {
      case .decided(let plan): return plan
      case .answer(let resolved): answer = resolved
      }
      delay += response.delay(forCall: claim.callNumber)
      // What the shortcut in `resume` delivers at once (after any earlier hop's delay).
      if Self.isDeliveredAsBuilt(response, to: task) { return .after(delay, answer, context) }
      guard response.isRedirect, task.traits.followsRedirects,
        let next = Redirect.request(following: answer, to: request)
      else { return delivery(of: answer, response, to: task, after: delay, context) }
      guard hop < Redirect.maximumHops else {
        let error = URLError(
          .httpTooManyRedirects, for: request,
          description: "more than \(Redirect.maximumHops) redirects")
        return .after(delay, Answer(error: error), context)
      }
      (routed, overrun) = followRedirect(
        task, from: request, to: next, answer: answer, stub: definition)
      request = next
      hop += 1
    }
  }

  /// What routing found: the stub that answers (`claim`), or none; `overrun` when matching
  /// ran past its budget, and the request must fail.
  struct Routed {
    var claim: StubTable.Claim?
    var overrun: MatchBudget.Overrun?
  }

  /// Finds the newest stub that matches `request` and may answer now, and counts the call:
  /// in one critical region when no matcher holds user code or may take long, else matching
  /// outside the lock.
  ///
  /// Outside the lock, the candidates are matched in routing order on a copy of the registry,
  /// under a ``MatchBudget``, and each time one matches, the lock is taken to claim the first of
  /// those matched so far that may answer now (scenario state and call limits are read there,
  /// as they are then). A stub matched earlier that has become free meanwhile wins over the
  /// later one, so the choice is the one a single critical region would have made at that
  /// moment; only the claim, never a pattern, runs under the lock.
  private func route(_ request: URLRequest) -> Routed {
    typealias Copy = (StubTable.Registry, MatchLimits, (@Sendable () -> Void)?)
    let copy = withLock { state -> Copy? in
      guard state.stubs.needsMatchingOutsideTheLock else { return nil }
      return (state.stubs.registry, state.matchLimits, state.matchProbe)
    }
    guard let (registry, limits, probe) = copy else {
      return Routed(claim: withLock { $0.stubs.claimFirstMatch(request) })
    }
    let budget = MatchBudget(limits, probe: probe)
    let facts = registry.facts(for: request)
    var matched: [(id: Int, parameters: [String: String])] = []
    let found = budget.run {
      registry.firstCandidate(facts) { id -> Routed? in
        guard let definition = registry.definitions[id] else { return nil }
        let parameters = StubTable.Registry.match(definition, facts)
        if budget.isSpent {
          budget.blame(voice.name("\(definition.matcher)", registeredAt: definition.site))
          return Routed(claim: nil, overrun: budget.overrun)
        }
        guard let parameters else { return nil }
        matched.append((id, parameters))
        guard var claim = withLock({ $0.stubs.claimFirst(of: matched) }) else { return nil }
        if registry.requestTransform == nil { claim.sent = facts }
        return Routed(claim: claim)
      }
    }
    return found ?? Routed()
  }

  /// Records a redirect hop (its answer, then the follow-up request) and routes the follow-up
  /// in the same critical region when it can.
  private func followRedirect(
    _ task: MockTask, from request: URLRequest, to next: URLRequest, answer: Answer,
    stub: StubTable.Definition
  ) -> (StubTable.Claim?, MatchBudget.Overrun?) {
    let exchange = Exchange(
      taskIdentifier: task.taskIdentifier, request: request, answer: answer, stub: stub,
      door: task.door)
    let claim = withLock { state -> StubTable.Claim?? in
      state.records.recordHop(exchange)
      state.records.recordSent(next, taskIdentifier: task.taskIdentifier)
      state.redirect(task, to: next)
      guard !state.stubs.needsMatchingOutsideTheLock else { return .none }
      return .some(state.stubs.claimFirstMatch(next))
    }
    if let claim { return (claim, nil) }
    let routed = route(next)
    return (routed.claim, routed.overrun)
  }

  /// No stub matched `request`: the unmatched-request policy decides. A request whose
  /// matching overran its budget fails whatever the policy, with the report of the overrun.
  private func decideUnmatched(
    _ task: MockTask, _ request: URLRequest, after delay: Duration,
    overrun: MatchBudget.Overrun? = nil
  ) -> Plan {
    if let overrun {
      let redaction = withLock { state -> ReportRedaction in
        state.records.recordUnmatched(
          request, taskIdentifier: task.taskIdentifier, reported: true)
        return state.reportRedaction
      }
      return .unmatched(
        Plan.Unmatched(
          request: request, table: StubTable(), redaction: redaction, overrun: overrun))
    }
    let (policy, table, redaction) = withLock {
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
      return .unmatched(
        Plan.Unmatched(request: request, table: table ?? StubTable(), redaction: redaction))
    case .respond(let response):
      let context = Plan.Context(request: request, stub: nil)
      switch resolve(response, for: task, context) {
      case .decided(let plan): return plan
      case .answer(let answer):
        return delivery(
          of: answer, response, to: task, after: delay + (response.delay ?? .zero), context)
      }
    case .passThrough(let session):
      return forward(task, request, to: session, site: ownerSite)
    }
  }

  /// What resolving a response gave: its answer, or a plan that answers otherwise.
  private enum Resolution {
    case answer(Answer)
    /// A proxied response's forward, or the refusal of a response that cannot answer.
    case decided(Plan)
  }

  /// The answer `response` gives the request of `context`; `sent` is what routing read of its
  /// URL, when it did.
  private func resolve(
    _ response: StubResponse, for task: MockTask, _ context: Plan.Context, sent: RequestFacts? = nil
  ) -> Resolution {
    if case .proxy(let upstream) = response.content {
      return .decided(proxy(task, upstream, of: response, context))
    }
    switch response.resolve(
      for: context.request, sent: sent, now: response.isTemplated ? scheduler.date() : nil)
    {
    case .invalid(let problem): return .decided(invalid(problem, context))
    case .answer(let built): return .answer(built)
    case .webSocket: return .answer(webSocketAnswer(of: response, to: task, context))
    }
  }

  /// Where a problem with the answer of `context` is reported: at its stub, or (for the
  /// unmatched-request policy's response) where the double was made.
  private func site(of context: Plan.Context) -> CallSite {
    context.stub?.site ?? ownerSite
  }

  /// How `answer`, the resolved answer of `response`, is delivered: in parts when the
  /// response dribbles its body, else whole. The task's time limits cut the stream where
  /// URLSession's would: a gap between pieces longer than the request timeout (an idle timer
  /// that every piece starts again), or a piece due after the resource timeout; the stream
  /// fails then.
  private func delivery(
    of answer: Answer, _ response: StubResponse, to task: MockTask, after delay: Duration,
    _ context: Plan.Context
  ) -> Plan {
    guard let dribble = response.dribble, let data = answer.data, answer.error == nil,
      var plan = DribblePlan(body: data, dribble)
    else { return .after(delay, answer, context) }
    let limits = task.limits
    // Too late for the head as well: a delayed answer, which times out.
    if let head = limits.head, delay > head { return .after(delay, answer, context) }
    plan.cut(idle: limits.idle, total: limits.total.map { $0 - delay })
    return .stream(answer, plan, after: delay, context)
  }

  /// What a WebSocket script answers `task`: the upgrade, with the connection the script
  /// runs, for a WebSocket task; `426 Upgrade Required` for any other request.
  private func webSocketAnswer(
    of response: StubResponse, to task: MockTask, _ context: Plan.Context
  ) -> Answer {
    let request = context.request
    guard task.kind == .webSocket, let script = response.webSocketScript,
      let head = StubResponse.upgradeResponse(for: request, subprotocol: script.subprotocol)
    else { return StubResponse.upgradeRequired(for: request) }
    let conversation = WebSocketConversation(
      subprotocol: script.subprotocol, steps: script.steps, scheduler: scheduler,
      reporter: reporter, site: site(of: context), summary: request.summary)
    return Answer(upgrade: head, conversation)
  }

  /// A stub (or the policy's response) that cannot answer: the test hears `problem` at the
  /// stub's site, and the request fails.
  private func invalid(_ problem: String, _ context: Plan.Context) -> Plan {
    let request = context.request
    let error = URLError(stubCannotAnswer: request, description: problem)
    return .refuse(
      error, report: "The stub registered here cannot answer \(request.summary): \(problem)",
      site: site(of: context), Plan.Context(request: request, stub: nil), yieldsToCancel: true)
  }

  /// Passes the task to `session`, sending `upstream` instead of the task's request when
  /// given (a proxied stub's), and recording the exchange as `stub`'s. Refused for a
  /// WebSocket, whose messages cannot pass through a data task's relay, and for a loop of
  /// sessions.
  private func forward(
    _ task: MockTask, _ request: URLRequest, to session: any HTTPSession, site: CallSite,
    sending upstream: URLRequest? = nil, stub: StubTable.Definition? = nil
  ) -> Plan {
    let context = Plan.Context(request: request, stub: nil)
    switch Self.forwardBar(for: task) {
    case .webSocket?:
      let error = URLError(
        .unsupportedURL, for: request,
        description: "\(ownerName) cannot pass a WebSocket through to another session; stub it")
      return .refuse(error, report: nil, site: site, context, yieldsToCancel: false)
    case .loop?:
      let error = URLError(
        .resourceUnavailable, for: request,
        description: "forwarded \(Forwarding.maximumDepth) times in a row: a loop of sessions")
      let report =
        "\(request.summary) was forwarded \(Forwarding.maximumDepth) times in a row: this "
        + "\(ownerName) leads back to itself (directly, through a SpySession, or through an "
        + "unmatched-request policy). Forward to a different session."
      return .refuse(error, report: report, site: site, context, yieldsToCancel: false)
    case nil: break
    }
    let receiver = withLock { $0.takeSinkForForwarding(of: task) }
    return .forward(
      Plan.Forward(
        receiver: receiver, request: request, upstream: upstream, session: session,
        core: Forwarding.core(of: session), stub: stub))
  }

  /// A proxied answer (`StubResponse.proxy`): the request, changed as `upstream` says, goes
  /// to its session, and what that session answers is the stub's answer. It comes when the
  /// upstream answers, so a delay or a dribble is refused.
  private func proxy(
    _ task: MockTask, _ upstream: StubResponse.Proxy, of response: StubResponse,
    _ context: Plan.Context
  ) -> Plan {
    let request = context.request
    guard response.isImmediate, !response.isDribbled else {
      return invalid(
        "A proxied response (.proxy(to: \(upstream.baseText))) cannot be delayed "
          + "or dribbled: it comes when the upstream answers.", context)
    }
    var base = upstream.baseText
    if let template = upstream.baseTemplate {
      // A templated proxyBaseUrl, rendered with the request as WireMock renders it.
      switch template.render(for: request, headers: [:], body: nil, now: scheduler.date()) {
      case .success(let rendered): base = String(decoding: rendered.body ?? Data(), as: UTF8.self)
      case .failure(let error):
        return invalid("The proxy base URL template cannot be rendered: \(error)", context)
      }
    }
    guard StubResponse.Proxy.isBaseURL(base) else {
      let what =
        upstream.baseTemplate == nil
        ? (base.contains("{{")
          ? " (a template: name the response-template transformer, or template every response)"
          : "")
        : " (rendered from the template \(upstream.baseText))"
      return invalid(
        "The proxy base URL \(base)\(what) is not an http or https URL with a host and no "
          + "query.", context)
    }
    guard let sent = upstream.upstreamRequest(for: request, base: base) else {
      return invalid("\(request.summary) has no path and query to send to \(base).", context)
    }
    return forward(
      task, request, to: upstream.session, site: site(of: context), sending: sent,
      stub: context.stub)
  }
}
