import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A mock's stubs, their use and its scenario state: registration, the index that finds
/// candidates, and the claim that picks the one that answers.
///
/// A value, kept in the session core's state behind the core's one lock, so that a request is
/// recorded, routed and claimed in one critical region. Matching runs outside the lock when a
/// matcher holds user code (on a copy of ``Registry``); only the claim runs inside it.
struct StubTable: Sendable {
  enum Responder: Sendable {
    case sequence([StubResponse])
    case dynamic(@Sendable (URLRequest, [String: String]) -> StubResponse)
  }

  /// What names a stub in reports and exchanges: its matcher and where it was registered.
  /// Apart from the responder, so that an exchange that names a removed stub does not keep its
  /// response closure (and what that captured) alive.
  final class Origin: Sendable, CustomStringConvertible {
    let matcher: RequestMatcher
    let site: CallSite

    init(matcher: RequestMatcher, site: CallSite) {
      self.matcher = matcher
      self.site = site
    }

    /// `GET /users/{login} (registered at UserTests.swift:12)`.
    var description: String { "\(matcher) (registered at \(site))" }
  }

  /// What never changes about a stub once registered (a class, so that routing passes it
  /// around with one retain instead of copying its fields).
  final class Definition: Sendable, CustomStringConvertible {
    let id: Int
    let origin: Origin
    let responder: Responder
    /// Whether the responder reads the pattern's `{name}` values (only a closure does).
    let readsParameters: Bool

    var matcher: RequestMatcher { origin.matcher }
    var site: CallSite { origin.site }

    init(id: Int, matcher: RequestMatcher, responder: Responder, site: CallSite) {
      self.id = id
      self.origin = Origin(matcher: matcher, site: site)
      self.responder = responder
      if case .dynamic = responder { readsParameters = true } else { readsParameters = false }
    }

    /// `GET /users/{login} (registered at UserTests.swift:12)`.
    var description: String { origin.description }
  }

  /// What changes as a stub is used and configured.
  struct Usage: Sendable {
    var calls = 0
    var limit: Int?
    /// The named scenario whose state `requiredState` and `nextState` are about; `nil` for the
    /// mock's default scenario (``URLSessionMock/scenarioState``).
    var scenario: String?
    var requiredState: String?
    var nextState: String?
    /// The answer the stub last gave from its list, kept for the next request to the same URL
    /// (see `SessionCore.resume`): reading it here, under the core's lock, takes no other lock.
    var ready: ReadyAnswer?

    /// Whether the stub may answer now: the cheap check routing makes for every candidate.
    func isAvailable(scenarios: Scenarios) -> Bool {
      if let limit, calls >= limit { return false }
      if let requiredState, requiredState != scenarios.state(of: scenario) { return false }
      return true
    }

    func unavailableReason(scenarios: Scenarios) -> String? {
      if let limit, calls >= limit {
        return "it has answered its \(CallCount.times(limit)) (.times(\(limit)))"
      }
      let current = scenarios.state(of: scenario)
      if let requiredState, requiredState != current {
        guard let scenario else {
          return "it answers in state \"\(requiredState)\", and the mock is in \"\(current)\""
        }
        return "it answers in state \"\(requiredState)\" of scenario \"\(scenario)\", which is in "
          + "\"\(current)\""
      }
      return nil
    }
  }

  /// The scenarios' states: the mock's default scenario (``URLSessionMock/scenarioState``) and
  /// the named ones (WireMock's `scenarioName`), each an independent state machine.
  struct Scenarios: Sendable {
    var defaultState = URLSessionMock.initialScenarioState
    /// The named scenarios that have left ``URLSessionMock/initialNamedScenarioState``.
    var named: [String: String] = [:]

    func state(of scenario: String?) -> String {
      guard let scenario else { return defaultState }
      return named[scenario] ?? URLSessionMock.initialNamedScenarioState
    }

    mutating func set(_ state: String, of scenario: String?) {
      if let scenario { named[scenario] = state } else { defaultState = state }
    }
  }

  /// A built answer of a listed response (the `index`-th), for requests to `url`.
  struct ReadyAnswer: Sendable {
    let index: Int
    let url: URL
    let isHead: Bool
    let answer: Answer
  }

  /// The stub chosen for a request, with what it needs to build the answer.
  struct Claim {
    let definition: Definition
    let callNumber: Int
    let parameters: [String: String]
    /// What routing read of the request (as sent: not redacted, not transformed), when it
    /// read it, so that building the answer need not read the URL and its path again: reading
    /// them from a `URLRequest` costs about as much as a small stub's whole answer.
    var sent: RequestFacts?

    /// Which of `count` listed responses this call plays: they play in order, and the last
    /// one keeps answering.
    func responseIndex(among count: Int) -> Int {
      Swift.min(callNumber, count) - 1
    }
  }

  /// The registered stubs and the index over them. Routing reads it in place under the lock
  /// when no matcher holds user code; otherwise it reads a copy (one retain per buffer) and
  /// matches outside the lock.
  struct Registry: Sendable {
    var definitions = StubSlots<Definition>()
    /// Stubs whose pattern is a literal path, by that decoded path.
    private var exactPaths: [String: [Int]] = [:]
    /// Stubs whose pattern has `{parameters}` (or a literal that holds an encoded `/`).
    private var templates = PathIndex()
    private var templateCount = 0
    /// Stubs the index cannot narrow down (`.any`, regexes, closures, `||`), in registration
    /// order.
    private var scanned: [Int] = []
    /// How many stubs have a matcher that calls a closure from the test.
    private(set) var userCodeCount = 0
    /// How many stubs have a matcher that may take long (``RequestMatcher/mayRunLong``).
    private(set) var slowMatcherCount = 0
    /// How many stubs match every request (`.any`): they need no parsing of the request.
    private var catchAllCount = 0
    /// What matchers see instead of the request as sent, if anything: a replaying mock's
    /// redaction, so that a live token matches a recording that says `REDACTED`. Library code,
    /// never the test's, so it may run under the lock.
    var requestTransform: (@Sendable (URLRequest) -> URLRequest)?
    /// The priorities of the stubs that have one other than ``StubTable/defaultPriority``, by
    /// id: a lower number answers first, then the newest (WireMock's rule). Empty in the common
    /// case, where routing goes newest first alone.
    private(set) var priorities: [Int: Int] = [:]

    /// Sets stub `id`'s priority.
    mutating func setPriority(_ priority: Int, of id: Int) {
      guard definitions[id] != nil else { return }
      priorities[id] = priority == StubTable.defaultPriority ? nil : priority
    }

    /// Stub `id`'s priority.
    func priority(of id: Int) -> Int { priorities[id] ?? StubTable.defaultPriority }

    /// Adds `definition` to the table and its index. The one place the index grows.
    mutating func insert(_ definition: Definition) {
      let id = definition.id
      definitions[id] = definition
      update(for: definition, by: 1)
      if let literal = definition.matcher.exactURLIndexPath {
        exactPaths[literal, default: []].append(id)
      } else if let key = definition.matcher.indexKey {
        if let literal = key.pattern.literalPath {
          exactPaths[literal, default: []].append(id)
        } else {
          templates.insert(key.pattern.segments, id: id)
        }
      } else {
        scanned.append(id)
      }
    }

    /// Removes stub `id` from the table and its index; returns its definition, for the caller
    /// to release outside the lock. The one place the index shrinks.
    mutating func remove(_ id: Int) -> Definition? {
      guard let definition = definitions.removeValue(forKey: id) else { return nil }
      priorities[id] = nil
      update(for: definition, by: -1)
      if let literal = definition.matcher.exactURLIndexPath {
        exactPaths[literal]?.removeAll { $0 == id }
        if exactPaths[literal]?.isEmpty == true { exactPaths[literal] = nil }
      } else if let key = definition.matcher.indexKey {
        if let literal = key.pattern.literalPath {
          exactPaths[literal]?.removeAll { $0 == id }
          if exactPaths[literal]?.isEmpty == true { exactPaths[literal] = nil }
        } else {
          templates.remove(key.pattern.segments, id: id)
        }
      } else {
        scanned.removeAll { $0 == id }
      }
      return definition
    }

    /// Removes the stubs `ids` names from the table and its index, in time linear in the
    /// table's size however many go (removing them one by one walks the unindexed list once
    /// per stub); returns their definitions, for the caller to release outside the lock.
    mutating func remove(_ ids: Set<Int>) -> [Definition] {
      var removed: [Definition] = []
      var touchedPaths: Set<String> = []
      var touchesScanned = false
      for id in ids {
        guard let definition = definitions.removeValue(forKey: id) else { continue }
        removed.append(definition)
        priorities[id] = nil
        update(for: definition, by: -1)
        if let literal = definition.matcher.exactURLIndexPath {
          touchedPaths.insert(literal)
        } else if let key = definition.matcher.indexKey {
          if let literal = key.pattern.literalPath {
            touchedPaths.insert(literal)
          } else {
            templates.remove(key.pattern.segments, id: id)
          }
        } else {
          touchesScanned = true
        }
      }
      for literal in touchedPaths {
        exactPaths[literal]?.removeAll { ids.contains($0) }
        if exactPaths[literal]?.isEmpty == true { exactPaths[literal] = nil }
      }
      if touchesScanned { scanned.removeAll { ids.contains($0) } }
      return removed
    }

    private mutating func update(for definition: Definition, by change: Int) {
      let matcher = definition.matcher
      if let key = matcher.indexKey, key.pattern.literalPath == nil { templateCount += change }
      if matcher.callsUserCode { userCodeCount += change }
      if matcher.mayRunLong { slowMatcherCount += change }
      if case .any = matcher.node { catchAllCount += change }
    }

    /// The parsed request, unless every stub is a catch-all and none needs it.
    func facts(for request: URLRequest) -> RequestFacts? {
      guard catchAllCount != definitions.count else { return nil }
      return RequestFacts(requestTransform.map { $0(request) } ?? request)
    }

    /// The first result of `attempt` over the stubs that may match, newest first: the one walk
    /// over candidates that routing, in the lock or outside it, goes through.
    func firstCandidate<Result>(_ facts: RequestFacts?, _ attempt: (Int) -> Result?) -> Result? {
      if scanned.count == definitions.count && priorities.isEmpty {
        // Nothing is indexed: walk the scanned stubs without building a list.
        for id in scanned.reversed() {
          if let result = attempt(id) { return result }
        }
        return nil
      }
      var found: [Int] = []
      if let facts {
        if let key = facts.literalKey, let exact = exactPaths[key] { found = exact }
        if templateCount > 0 {
          let candidates = templates.candidates(for: facts.segments)
          if found.isEmpty { found = candidates } else { found += candidates }
        }
      }
      if !scanned.isEmpty { found += scanned }
      if found.count > 1 {
        if priorities.isEmpty {
          found.sort(by: >)
        } else {
          let priorities = priorities
          found.sort {
            let (a, b) = (
              priorities[$0] ?? StubTable.defaultPriority,
              priorities[$1] ?? StubTable.defaultPriority
            )
            return a != b ? a < b : $0 > $1
          }
        }
      }
      for id in found {
        if let result = attempt(id) { return result }
      }
      return nil
    }

    /// The pattern's parameters if `definition` matches the request, else `nil`.
    static func match(_ definition: Definition, _ facts: RequestFacts?) -> [String: String]? {
      if case .any = definition.matcher.node { return [:] }
      guard let facts else { return nil }
      let evaluation = definition.matcher.evaluate(
        facts, capturingParameters: definition.readsParameters)
      return evaluation.matched ? evaluation.parameters : nil
    }
  }

  /// The priority of a stub that names none: WireMock's default, so that a mapping's
  /// `"priority": 1` wins over stubs written in code and a `"priority": 9` loses to them.
  static let defaultPriority = 5

  var registry = Registry()
  var usage = StubSlots<Usage>()
  var nextID = 0
  var scenarios = Scenarios()
  /// The default scenario's state.
  var scenarioState: String {
    get { scenarios.defaultState }
    set { scenarios.defaultState = newValue }
  }
  /// The stubs the last `use(_:)` of a bundle added, which the next one replaces.
  var bundleStubIDs: [Int] = []

  /// Registers a stub; returns its id.
  mutating func add(_ matcher: RequestMatcher, responder: Responder, site: CallSite) -> Int {
    nextID += 1
    registry.insert(Definition(id: nextID, matcher: matcher, responder: responder, site: site))
    usage[nextID] = Usage()
    return nextID
  }

  /// Whether some matcher calls the test's code, or may take long, so that matching must run
  /// outside the lock (the latter under a ``MatchBudget``).
  var needsMatchingOutsideTheLock: Bool {
    @inline(__always) get { registry.userCodeCount > 0 || registry.slowMatcherCount > 0 }
  }

  /// Routes and claims in one go: the newest stub that matches and may answer now. Runs no
  /// user code, so it runs under the lock; only for tables without user-code matchers.
  mutating func claimFirstMatch(_ request: URLRequest) -> Claim? {
    let facts = registry.facts(for: request)
    guard let chosen = firstAvailableMatch(facts) else { return nil }
    var claim = claim(chosen.definition, parameters: chosen.parameters)
    if registry.requestTransform == nil { claim?.sent = facts }
    return claim
  }

  /// The newest stub that matches and may answer now.
  ///
  /// The closure captures the few parts it reads, each a single reference: a closure that
  /// reads `self` made Swift copy the whole table, field by field, for every request.
  private func firstAvailableMatch(_ facts: RequestFacts?) -> (
    definition: Definition, parameters: [String: String]
  )? {
    let (usage, scenarios, definitions) = (usage, scenarios, registry.definitions)
    return registry.firstCandidate(facts) {
      id -> (definition: Definition, parameters: [String: String])? in
      guard usage.read(id, { $0.isAvailable(scenarios: scenarios) }) == true,
        let definition = definitions[id],
        let parameters = Registry.match(definition, facts)
      else { return nil }
      return (definition, parameters)
    }
  }

  /// Counts a call to the first of `matches` (newest first) that may answer now.
  mutating func claimFirst(of matches: [(id: Int, parameters: [String: String])]) -> Claim? {
    for match in matches {
      if let claim = claim(match.id, parameters: match.parameters) { return claim }
    }
    return nil
  }

  /// Counts a call to stub `id` if it may answer now.
  private mutating func claim(_ id: Int, parameters: [String: String]) -> Claim? {
    guard let definition = registry.definitions[id] else { return nil }
    return claim(definition, parameters: parameters)
  }

  /// Counts a call to `definition`'s stub if it may answer now.
  private mutating func claim(_ definition: Definition, parameters: [String: String]) -> Claim? {
    let id = definition.id
    let scenarios = scenarios
    let outcome = usage.update(id) {
      usage -> (calls: Int, nextState: String?, scenario: String?)? in
      guard usage.isAvailable(scenarios: scenarios) else { return nil }
      usage.calls += 1
      return (usage.calls, usage.nextState, usage.scenario)
    }
    guard let outcome = outcome ?? nil else { return nil }
    if let next = outcome.nextState { self.scenarios.set(next, of: outcome.scenario) }
    return Claim(definition: definition, callNumber: outcome.calls, parameters: parameters)
  }

  /// The stubs closest to `request`, closest first, each with why it did not answer. Runs
  /// matchers, so call it on a copy, outside the lock.
  /// What differed is phrased for a report that masks header values as `redaction` says.
  func nearMisses(
    for request: URLRequest, redacting redaction: ReportRedaction
  ) -> [(definition: Definition, reasons: [String])] {
    rankedNearMisses(for: request, redacting: redaction).map { ($0.definition, $0.reasons) }
  }

  /// Every stub, closest to `request` first, with its distance: the summed weight of what
  /// differed (0 when it matches and may answer). Patterns run under the current
  /// ``MatchBudget``, or one of the default limits.
  func rankedNearMisses(
    for request: URLRequest, redacting redaction: ReportRedaction
  ) -> [(definition: Definition, distance: Double, reasons: [String])] {
    guard MatchBudget.current != nil else {
      return MatchBudget(MatchLimits()).run { rankedNearMisses(for: request, redacting: redaction) }
    }
    let facts = RequestFacts(registry.requestTransform.map { $0(request) } ?? request)
    let ranked = registry.definitions.values.map { definition in
      var evaluation = definition.matcher.evaluate(facts, redaction: redaction)
      if evaluation.matched,
        let reason = usage[definition.id]?.unavailableReason(scenarios: scenarios)
      {
        evaluation.miss("matches, but \(reason)", weight: 0.5)
      }
      return (definition, evaluation)
    }
    return ranked.sorted { ($0.1.distance, -$0.0.id) < ($1.1.distance, -$1.0.id) }
      .map { ($0.0, $0.1.distance, $0.1.mismatches) }
  }

  /// Stubs that have never answered, in registration order.
  var unusedDefinitions: [Definition] {
    registry.definitions.values.filter { usage[$0.id]?.calls == 0 }.sorted { $0.id < $1.id }
  }
}
