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
public final class Stub: @unchecked Sendable, CustomStringConvertible {
  // @unchecked Sendable: `router` is weak (so a kept handle does not keep the mock alive) and
  // is written only in `init`; every other field is `let`.
  private weak var router: StubRouter?
  let id: Int

  /// What the stub matches.
  public let matcher: RequestMatcher
  let site: CallSite

  init(router: StubRouter, id: Int, matcher: RequestMatcher, site: CallSite) {
    self.router = router
    self.id = id
    self.matcher = matcher
    self.site = site
  }

  /// Lets the stub answer at most `count` times; after that, older matching stubs answer.
  /// A count below zero is treated as zero.
  @discardableResult
  public func times(_ count: Int) -> Stub {
    router?.update(id) { $0.limit = max(0, count) }
    return self
  }

  /// Lets the stub answer only while the mock's ``URLSessionMock/scenarioState`` is `state`.
  @discardableResult
  public func whenState(_ state: String) -> Stub {
    router?.update(id) { $0.requiredState = state }
    return self
  }

  /// Moves the mock's ``URLSessionMock/scenarioState`` to `state` each time this stub answers.
  @discardableResult
  public func willSetState(_ state: String) -> Stub {
    router?.update(id) { $0.nextState = state }
    return self
  }

  /// How many requests this stub has answered.
  public var callCount: Int {
    router?.usage(of: id)?.calls ?? 0
  }

  /// Removes the stub from its mock; later requests no longer see it.
  public func remove() {
    router?.remove(id)
  }

  /// The matcher and where the stub was registered, such as
  /// `GET /users/{login} (registered at MyTests/UserTests.swift:12)`.
  public var description: String {
    "\(matcher) (registered at \(site))"
  }
}
