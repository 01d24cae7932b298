import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A mock's stubs: registration, the index that finds candidates, and the claim that picks the
/// one that answers.
///
/// Matching runs outside the lock (matchers may hold user closures); only the claim, which
/// counts the call and moves the scenario state, runs inside it.
final class StubRouter: Sendable {
  enum Responder: Sendable {
    case sequence([StubResponse])
    case dynamic(@Sendable (URLRequest, [String: String]) -> StubResponse)
  }

  /// What never changes about a stub once registered (a class, so that routing passes it
  /// around with one retain instead of copying its fields).
  final class Definition: Sendable {
    let id: Int
    let matcher: RequestMatcher
    let responder: Responder
    let site: CallSite
    /// Whether the responder reads the pattern's `{name}` values (only a closure does).
    let readsParameters: Bool

    init(id: Int, matcher: RequestMatcher, responder: Responder, site: CallSite) {
      self.id = id
      self.matcher = matcher
      self.responder = responder
      self.site = site
      if case .dynamic = responder { readsParameters = true } else { readsParameters = false }
    }
  }

  /// What changes as a stub is used and configured.
  struct Usage: Sendable {
    var calls = 0
    var limit: Int?
    var requiredState: String?
    var nextState: String?

    /// Whether the stub may answer now: the cheap check routing makes for every candidate.
    func isAvailable(scenarioState: String) -> Bool {
      if let limit, calls >= limit { return false }
      if let requiredState, requiredState != scenarioState { return false }
      return true
    }

    func unavailableReason(scenarioState: String) -> String? {
      if let limit, calls >= limit {
        return "it has answered its \(CallCount.times(limit)) (.times(\(limit)))"
      }
      if let requiredState, requiredState != scenarioState {
        return "it answers in state \"\(requiredState)\", and the mock is in \"\(scenarioState)\""
      }
      return nil
    }
  }

  /// The stubs. Routing reads it under the lock when no matcher holds user code; otherwise it
  /// reads a copy (one retain per buffer) and matches outside the lock.
  struct Table: Sendable {
    var definitions = StubSlots<Definition>()
    /// Stubs whose pattern is a literal path, by that decoded path.
    var exactPaths: [String: [Int]] = [:]
    /// Stubs whose pattern has `{parameters}` (or a literal that holds an encoded `/`).
    var index = PathIndex()
    var indexedCount = 0
    /// Stubs the index cannot narrow down (`.any`, regexes, closures, `||`), in registration
    /// order.
    var scanned: [Int] = []
    /// How many stubs have a matcher that calls a closure from the test.
    var userCodeCount = 0

    /// How many stubs match every request (`.any`): they need no parsing of the request.
    var catchAllCount = 0

    /// Removes stub `id` from the table and its index; returns its definition, for the caller
    /// to release outside the lock.
    mutating func remove(_ id: Int) -> Definition? {
      guard let definition = definitions.removeValue(forKey: id) else { return nil }
      if let key = definition.matcher.indexKey {
        if let literal = key.pattern.literalPath {
          exactPaths[literal]?.removeAll { $0 == id }
          if exactPaths[literal]?.isEmpty == true { exactPaths[literal] = nil }
        } else {
          index.remove(key.pattern.segments, id: id)
          indexedCount -= 1
        }
      } else {
        scanned.removeAll { $0 == id }
      }
      if definition.matcher.callsUserCode { userCodeCount -= 1 }
      if case .any = definition.matcher.node { catchAllCount -= 1 }
      return definition
    }

    /// The parsed request, unless every stub is a catch-all and none needs it.
    func facts(for request: URLRequest) -> RequestFacts? {
      catchAllCount == definitions.count ? nil : RequestFacts(request)
    }

    /// Whether every stub is scanned, so that candidates are `scanned`, newest last.
    var scansEverything: Bool { scanned.count == definitions.count }

    /// The first result of `attempt` over the stubs that may match, newest first.
    func firstCandidate<Result>(_ facts: RequestFacts?, _ attempt: (Int) -> Result?) -> Result? {
      if scansEverything {
        // Nothing is indexed: walk the scanned stubs without building a list.
        for id in scanned.reversed() {
          if let result = attempt(id) { return result }
        }
        return nil
      }
      for id in indexedCandidates(facts) {
        if let result = attempt(id) { return result }
      }
      return nil
    }

    /// The stubs that may match when some are indexed, newest first.
    func indexedCandidates(_ facts: RequestFacts?) -> [Int] {
      var found: [Int] = []
      if let facts {
        if let key = facts.literalKey, let exact = exactPaths[key] { found = exact }
        if indexedCount > 0 {
          let templates = index.candidates(for: facts.segments)
          if found.isEmpty { found = templates } else { found += templates }
        }
      }
      if !scanned.isEmpty { found += scanned }
      if found.count > 1 { found.sort(by: >) }
      return found
    }

    /// The pattern's parameters if `definition` matches the request, else `nil`.
    func match(_ definition: Definition, _ facts: RequestFacts?) -> [String: String]? {
      if case .any = definition.matcher.node { return [:] }
      guard let facts else { return nil }
      let evaluation = definition.matcher.evaluate(
        facts, capturingParameters: definition.readsParameters)
      return evaluation.matched ? evaluation.parameters : nil
    }
  }

  struct State {
    var table = Table()
    var usage = StubSlots<Usage>()
    var nextID = 0
    var scenarioState = URLSessionMock.initialScenarioState

    /// The newest stub that matches and may answer now, with its parameters. Runs no user
    /// code, so it may run under the lock, reading the table in place.
    func firstAvailableMatch(_ facts: RequestFacts?) -> (id: Int, parameters: [String: String])? {
      // Plain loops, no closures over `self`: a closure here made Swift copy the whole state.
      if table.scansEverything {
        for id in table.scanned.reversed() {
          if let match = availableMatch(id, facts) { return match }
        }
        return nil
      }
      for id in table.indexedCandidates(facts) {
        if let match = availableMatch(id, facts) { return match }
      }
      return nil
    }

    private func availableMatch(_ id: Int, _ facts: RequestFacts?)
      -> (id: Int, parameters: [String: String])?
    {
      guard let definition = table.definitions[id],
        usage.read(id, { $0.isAvailable(scenarioState: scenarioState) }) == true,
        let parameters = table.match(definition, facts)
      else { return nil }
      return (id, parameters)
    }

    /// Routes and claims in one go when no matcher runs user code (so that it may run under the
    /// lock); `nil` when some matcher does, and routing must match outside the lock.
    mutating func routeWithoutUserCode(_ request: URLRequest) -> Claim?? {
      guard table.userCodeCount == 0 else { return .none }
      let facts = table.facts(for: request)
      guard let chosen = firstAvailableMatch(facts) else { return .some(nil) }
      return .some(claim(chosen.id, parameters: chosen.parameters))
    }

    /// Counts a call to stub `id` if it may answer now.
    mutating func claim(_ id: Int, parameters: [String: String]) -> Claim? {
      guard let definition = table.definitions[id] else { return nil }
      let scenarioState = scenarioState
      let outcome = usage.update(id) { usage -> (calls: Int, nextState: String?)? in
        guard usage.isAvailable(scenarioState: scenarioState) else { return nil }
        usage.calls += 1
        return (usage.calls, usage.nextState)
      }
      guard let outcome = outcome ?? nil else { return nil }
      if let next = outcome.nextState { self.scenarioState = next }
      return Claim(definition: definition, callNumber: outcome.calls, parameters: parameters)
    }
  }

  /// The stub chosen for a request, with what it needs to build the answer.
  struct Claim {
    let definition: Definition
    let callNumber: Int
    let parameters: [String: String]
  }

  /// The router's state lives in its mock's journal, behind the one lock of the mock, so that a
  /// request is recorded, routed and claimed in one critical region.
  let state: RoutingState

  init(journal: RequestJournal) {
    state = RoutingState(journal: journal)
  }

  /// The router's part of the journal's state, reached through the journal's lock.
  struct RoutingState: Sendable {
    let journal: RequestJournal

    func withLock<Result>(_ body: (inout State) -> Result) -> Result {
      journal.withLock { body(&$0.routing) }
    }
  }

  func add(_ matcher: RequestMatcher, responder: Responder, site: CallSite) -> Int {
    state.withLock { state in
      state.nextID += 1
      let id = state.nextID
      state.table.definitions[id] = Definition(
        id: id, matcher: matcher, responder: responder, site: site)
      if let key = matcher.indexKey {
        if let literal = key.pattern.literalPath {
          state.table.exactPaths[literal, default: []].append(id)
        } else {
          state.table.index.insert(key.pattern.segments, id: id)
          state.table.indexedCount += 1
        }
      } else {
        state.table.scanned.append(id)
      }
      if matcher.callsUserCode { state.table.userCodeCount += 1 }
      if case .any = matcher.node { state.table.catchAllCount += 1 }
      state.usage[id] = Usage()
      return id
    }
  }

  /// Removes the stub from routing; its usage stays, so that its handle's `callCount` still
  /// says how often it answered.
  func remove(_ id: Int) {
    let removed = state.withLock { $0.table.remove(id) }
    // Released here, outside the lock: a response closure's captures may run code in deinit.
    withExtendedLifetime(removed) {}
  }

  func update(_ id: Int, _ change: (inout Usage) -> Void) {
    state.withLock { state in
      if var usage = state.usage[id] {
        change(&usage)
        state.usage[id] = usage
      }
    }
  }

  func usage(of id: Int) -> Usage? {
    state.withLock { $0.usage[id] }
  }

  /// Finds the newest stub that matches `request` and may answer now, and counts the call.
  func route(_ request: URLRequest) -> Claim? {
    // Without user code in any matcher, match and claim in one critical region.
    let fastResult = state.withLock { $0.routeWithoutUserCode(request) }
    if let fastResult { return fastResult }
    // Some matcher calls the test's closures: match a copy outside the lock, then claim.
    let table = state.withLock { $0.table }
    let facts = table.facts(for: request)
    var matched: [(id: Int, parameters: [String: String])] = []
    _ = table.firstCandidate(facts) { id -> Bool? in
      if let definition = table.definitions[id], let parameters = table.match(definition, facts) {
        matched.append((id, parameters))
      }
      return nil
    }
    if matched.isEmpty { return nil }
    return state.withLock { state in
      for candidate in matched {
        if let claim = state.claim(candidate.id, parameters: candidate.parameters) { return claim }
      }
      return nil
    }
  }

  /// The stubs closest to `request`, closest first, each with why it did not answer.
  func nearMisses(for request: URLRequest) -> [(definition: Definition, reasons: [String])] {
    let (table, usage, scenarioState) = state.withLock { ($0.table, $0.usage, $0.scenarioState) }
    let facts = RequestFacts(request)
    let ranked = table.definitions.values.map { definition in
      var evaluation = definition.matcher.evaluate(facts)
      if evaluation.matched,
        let reason = usage[definition.id]?.unavailableReason(
          scenarioState: scenarioState)
      {
        evaluation.miss("matches, but \(reason)", weight: 0.5)
      }
      return (definition, evaluation)
    }
    return ranked.sorted { ($0.1.distance, -$0.0.id) < ($1.1.distance, -$1.0.id) }
      .map { ($0.0, $0.1.mismatches) }
  }

  /// Stubs that have never answered, in registration order.
  func unusedDefinitions() -> [Definition] {
    state.withLock { state in
      state.table.definitions.values.filter { state.usage[$0.id]?.calls == 0 }.sorted {
        $0.id < $1.id
      }
    }
  }
}
