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

  /// What never changes about a stub once registered.
  struct Definition: Sendable {
    let id: Int
    let matcher: RequestMatcher
    let responder: Responder
    let site: CallSite
  }

  /// What changes as a stub is used and configured.
  struct Usage: Sendable {
    var calls = 0
    var limit: Int?
    var requiredState: String?
    var nextState: String?

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

  /// The stubs, replaced as a whole only when stubs are added or removed, so that routing can
  /// read a snapshot without holding the lock.
  struct Table: Sendable {
    var definitions: [Int: Definition] = [:]
    var index = PathIndex()
    /// Stubs the index cannot narrow down (`.any`, regexes, closures, `||`), in registration
    /// order.
    var scanned: [Int] = []
  }

  struct State {
    var table = Table()
    var usage: [Int: Usage] = [:]
    var nextID = 0
    var scenarioState = URLSessionMock.initialScenarioState
    var policy = UnmatchedRequestPolicy.fail
  }

  /// The stub chosen for a request, with what it needs to build the answer.
  struct Claim {
    let definition: Definition
    let callNumber: Int
    let parameters: [String: String]
  }

  let state = Locked(State())

  func add(_ matcher: RequestMatcher, responder: Responder, site: CallSite) -> Int {
    state.withLock { state in
      state.nextID += 1
      let id = state.nextID
      state.table.definitions[id] = Definition(
        id: id, matcher: matcher, responder: responder, site: site)
      if let key = matcher.indexKey {
        state.table.index.insert(key.pattern.segments, id: id)
      } else {
        state.table.scanned.append(id)
      }
      state.usage[id] = Usage()
      return id
    }
  }

  /// Removes the stub from routing; its usage stays, so that its handle's `callCount` still
  /// says how often it answered.
  func remove(_ id: Int) {
    state.withLock { state in
      state.table.definitions[id] = nil
      state.table.scanned.removeAll { $0 == id }
    }
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
    let table = state.withLock { $0.table }
    if table.definitions.isEmpty { return nil }
    // The catch-all fast path: a request needs no parsing when the newest stub takes anything.
    var facts: RequestFacts?
    var candidates: [Int]
    if table.scanned.isEmpty {
      facts = RequestFacts(request)
      candidates = table.index.candidates(for: facts?.segments ?? [])
    } else if table.definitions.count == table.scanned.count {
      candidates = table.scanned
    } else {
      facts = RequestFacts(request)
      candidates = table.index.candidates(for: facts?.segments ?? []) + table.scanned
    }
    candidates.sort(by: >)
    var matched: [(id: Int, parameters: [String: String])] = []
    for id in candidates {
      guard let definition = table.definitions[id] else { continue }
      if case .any = definition.matcher.node {
        matched.append((id, [:]))
        continue
      }
      let prepared = facts ?? RequestFacts(request)
      facts = prepared
      let evaluation = definition.matcher.evaluate(prepared)
      if evaluation.matched { matched.append((id, evaluation.parameters)) }
    }
    if matched.isEmpty { return nil }
    return state.withLock { state -> Claim? in
      for candidate in matched {
        guard var usage = state.usage[candidate.id],
          let definition = state.table.definitions[candidate.id],
          usage.unavailableReason(scenarioState: state.scenarioState) == nil
        else { continue }
        usage.calls += 1
        state.usage[candidate.id] = usage
        if let next = usage.nextState { state.scenarioState = next }
        return Claim(
          definition: definition, callNumber: usage.calls, parameters: candidate.parameters)
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
