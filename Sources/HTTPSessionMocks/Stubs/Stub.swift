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
