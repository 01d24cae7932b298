/// A registered stub: the handle ``URLSessionMock/stub(_:with:fileID:filePath:line:column:)-(_,StubResponse,_,_,_,_)`` returns.
///
/// Use it to limit, inspect or remove the stub, and to tie it to scenario states:
///
/// ```swift
/// mock.stub(.get("/token"), with: .json(token)).times(1)
/// let login = mock.stub(.post("/login"), with: .status(200))
///   .whenState("logged out").willSetState("logged in")
/// ...
/// #expect(login.callCount == 1)
/// login.remove()
/// ```
public final class Stub: Sendable, CustomStringConvertible {
  /// The mock core's state, held weakly, so that a kept handle does not keep the mock alive
  /// (see ``WeakLocked`` for why not the core itself).
  private let state: WeakLocked<SessionCore.State>
  let id: Int

  /// What the stub matches.
  public let matcher: RequestMatcher
  let site: CallSite

  init(core: SessionCore, id: Int, matcher: RequestMatcher, site: CallSite) {
    self.state = core.weakState
    self.id = id
    self.matcher = matcher
    self.site = site
  }

  /// Lets the stub answer at most `count` times; after that, older matching stubs answer.
  /// A count below zero is treated as zero.
  @discardableResult
  public func times(_ count: Int) -> Stub {
    update { $0.limit = max(0, count) }
    return self
  }

  /// Lets the stub answer only while the mock's ``URLSessionMock/scenarioState`` is `state`.
  @discardableResult
  public func whenState(_ state: String) -> Stub {
    update { $0.requiredState = state }
    return self
  }

  /// Moves the mock's ``URLSessionMock/scenarioState`` to `state` each time this stub answers.
  @discardableResult
  public func willSetState(_ state: String) -> Stub {
    update { $0.nextState = state }
    return self
  }

  /// Ties ``whenState(_:)`` and ``willSetState(_:)`` to the named scenario `name` instead of
  /// the mock's default one: each named scenario is a state machine of its own, which starts
  /// in ``URLSessionMock/initialNamedScenarioState`` (`"Started"`, as in WireMock).
  ///
  /// ```swift
  /// mock.stub(.get("/cart"), with: .text("empty")).inScenario("cart").whenState("Started")
  /// mock.stub(.post("/cart"), with: .status(201)).inScenario("cart").willSetState("full")
  /// mock.stub(.get("/cart"), with: .text("1 item")).inScenario("cart").whenState("full")
  /// // mock.scenarioState(of: "cart") is "full" after the POST; other scenarios did not move.
  /// ```
  @discardableResult
  public func inScenario(_ name: String) -> Stub {
    update { $0.scenario = name }
    return self
  }

  /// Gives the stub a priority: among the stubs that match a request, the lowest number
  /// answers, then the newest. A stub without one has priority 5, WireMock's default.
  ///
  /// ```swift
  /// mock.stub(.url("/{any}"), with: .status(404)).priority(10)  // the fallback
  /// mock.stub(.get("/health"), with: .status(200))              // answers, though older ones match
  /// ```
  @discardableResult
  public func priority(_ priority: Int) -> Stub {
    state.withLock { $0.stubs.registry.setPriority(priority, of: id) }
    return self
  }

  /// How many requests this stub has answered.
  public var callCount: Int {
    (state.withLock { $0.stubs.usage[id]?.calls } ?? nil) ?? 0
  }

  /// Removes the stub from its mock; later requests no longer see it. Its ``callCount`` stays.
  public func remove() {
    let removed = state.withLock { $0.stubs.registry.remove(id) }
    // Released here, outside the lock: a response closure's captures may run code in deinit.
    withExtendedLifetime(removed) {}
  }

  private func update(_ change: (inout StubTable.Usage) -> Void) {
    state.withLock { state in _ = state.stubs.usage.update(id, change) }
  }

  /// The matcher and where the stub was registered, such as
  /// `GET /users/{login} (registered at MyTests/UserTests.swift:12)`.
  public var description: String {
    "\(matcher) (registered at \(site))"
  }
}
