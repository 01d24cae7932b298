import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSessionMock {
  // MARK: - Code you can't inject

  /// A real `URLSession` whose every request this mock answers.
  ///
  /// Use it for code that takes a `URLSession` rather than an `HTTPSession`. The session goes
  /// through Foundation's URL loading system, and its protocol class (first in the
  /// configuration's `protocolClasses`) hands every request to this mock: the same stubs,
  /// journal, verification, near-miss reports, scenario states and clock as when the mock is
  /// injected. Nothing reaches the network unless the mock's ``unmatchedRequestPolicy`` says
  /// ``UnmatchedRequestPolicy/passThrough(to:)``.
  ///
  /// ```swift
  /// let mock = URLSessionMock()
  /// mock.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
  /// let session = mock.makeURLSession()
  /// let (data, response) = try await session.data(from: URL(string: "https://api.github.com/users/octocat")!)
  /// ```
  ///
  /// Each mock has a protocol class of its own, so sessions of mocks in parallel tests never see
  /// each other's requests. The configuration is copied, and routed as by ``intercept(_:)``.
  ///
  /// > Important: A URLProtocol never sees the body of `uploadTask(with:from:)` or
  /// > `upload(for:from:)`, nor the configuration's `httpAdditionalHeaders`; see
  /// > <doc:Interception> for the limits of URL loading, and how downloads and body pieces
  /// > behave on Linux.
  ///
  /// - Parameters:
  ///   - configuration: The configuration to start from; `.ephemeral` by default.
  ///   - delegate: The session's delegate, as for `URLSession(configuration:delegate:delegateQueue:)`.
  ///   - delegateQueue: The queue the delegate and completion handlers run on; a serial queue of
  ///     the session's own if `nil`.
  public func makeURLSession(
    configuration: URLSessionConfiguration = .ephemeral,
    delegate: (any URLSessionDelegate)? = nil, delegateQueue: OperationQueue? = nil
  ) -> URLSession {
    let copy = (configuration.copy() as? URLSessionConfiguration) ?? configuration
    intercept(copy)
    return URLSession(configuration: copy, delegate: delegate, delegateQueue: delegateQueue)
  }

  /// Routes every request of the sessions made from `configuration` to this mock.
  ///
  /// Puts the mock's protocol class first in the configuration's `protocolClasses` (replacing
  /// another mock's), as MockingBird's `registerInConfig` does. Use it for a library that makes
  /// its own session from a configuration you hand it, such as Alamofire's
  /// `Session(configuration:)`:
  ///
  /// ```swift
  /// let configuration = URLSessionConfiguration.ephemeral
  /// mock.intercept(configuration)
  /// let client = APIClient(configuration: configuration)  // builds its own URLSession
  /// ```
  ///
  /// It also turns the configuration's URL cache off (`urlCache = nil`): the mock answers every
  /// request and never lets URL loading cache an answer, so a cache would only add a lookup,
  /// which on Linux moves the request to a background thread first, where a report of the
  /// mock's can no longer reach the test that made the request.
  ///
  /// Sessions made from the configuration before this call are not affected: a `URLSession`
  /// copies its configuration.
  public func intercept(_ configuration: URLSessionConfiguration) {
    let bridge: AnyClass = BridgeTable.protocolClass(for: self)
    let others = (configuration.protocolClasses ?? []).filter { !($0 is MockURLProtocol.Type) }
    configuration.protocolClasses = [bridge] + others
    configuration.urlCache = nil
  }

  /// Runs `body` with `URLSession.shared` answered by this mock, and returns what it returns.
  ///
  /// For code that calls `URLSession.shared` where you cannot change it (inside a third-party
  /// SDK): for the duration of `body`, every request made through `URLSession.shared` (and
  /// whatever else honours `URLProtocol.registerClass`) is answered by this mock. Code outside
  /// the scope is never intercepted, and the interception ends when `body` returns or throws.
  ///
  /// ```swift
  /// let mock = URLSessionMock()
  /// mock.stub(.get("/config"), with: .json(["flag": true]))
  /// let flags = try await mock.interceptingSharedSession {
  ///   try await FeatureFlags.load()  // uses URLSession.shared
  /// }
  /// ```
  ///
  /// This is the package's one process-wide mechanism, so it is made safe: only one scope is
  /// active at a time in the whole process. A scope entered while another is active waits for
  /// it to end, suspending without blocking a thread; scopes nested in the active one on the
  /// same task (of the same mock or another) do not wait, and the innermost one answers.
  ///
  /// > Important: On Linux, `URLSession.shared` copies the registered protocol classes when it
  /// > is first used. If anything used it before the first scope, its requests cannot be
  /// > intercepted: the scope then fails the test, saying so. Call
  /// > ``installSharedSessionDispatcher()`` at the start of the test process, before anything
  /// > touches `URLSession.shared`, or inject the mock (``makeURLSession(configuration:delegate:delegateQueue:)``).
  ///
  /// - Parameters:
  ///   - isolation: The actor the body runs on; the caller's, by default.
  ///   - fileID: Where the scope is, for failure reports; leave the default.
  ///   - filePath: Where the scope is, for failure reports; leave the default.
  ///   - line: Where the scope is, for failure reports; leave the default.
  ///   - column: Where the scope is, for failure reports; leave the default.
  ///   - body: The code whose `URLSession.shared` requests this mock answers.
  /// - Returns: What `body` returns.
  public func interceptingSharedSession<Result>(
    isolation: isolated (any Actor)? = #isolation, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
    _ body: () async throws -> Result
  ) async rethrows -> Result {
    let token = await SharedSessionGate.enter(self)
    defer { SharedSessionGate.leave(token) }
    if !(await SharedSessionGate.sharedSessionRoutes()) {
      reportSharedSessionNotRouted(
        CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }
    return try await SharedSessionGate.$heldToken.withValue(token) { try await body() }
  }

  /// Runs `body` with `URLSession.shared` answered by this mock, and returns what it returns;
  /// the synchronous form, which blocks its thread while another scope is active.
  ///
  /// See ``interceptingSharedSession(isolation:fileID:filePath:line:column:_:)``.
  ///
  /// - Parameters:
  ///   - fileID: Where the scope is, for failure reports; leave the default.
  ///   - filePath: Where the scope is, for failure reports; leave the default.
  ///   - line: Where the scope is, for failure reports; leave the default.
  ///   - column: Where the scope is, for failure reports; leave the default.
  ///   - body: The code whose `URLSession.shared` requests this mock answers.
  /// - Returns: What `body` returns.
  public func interceptingSharedSession<Result>(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column, _ body: () throws -> Result
  ) rethrows -> Result {
    let token = SharedSessionGate.enterBlocking(self)
    defer { SharedSessionGate.leave(token) }
    if !SharedSessionGate.sharedSessionRoutesBlocking() {
      reportSharedSessionNotRouted(
        CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }
    return try SharedSessionGate.$heldToken.withValue(token) { try body() }
  }

  /// Installs the dispatcher that lets ``interceptingSharedSession(isolation:fileID:filePath:line:column:_:)``
  /// answer `URLSession.shared`; call it once, at the start of the test process.
  ///
  /// On Linux, `URLSession.shared` copies the registered protocol classes the first time it is
  /// used, so the dispatcher must be registered before that. The first scope installs it too,
  /// which is enough when nothing used `URLSession.shared` before; call this where the test
  /// process starts (an XCTest `override class func setUp()`, the initializer of a test
  /// suite's shared fixture, a test host's startup) when something might. It is safe to call
  /// more than once and from any thread. Outside a scope the dispatcher declines every request,
  /// so `URLSession.shared` behaves as if it were not there.
  ///
  /// ```swift
  /// override class func setUp() {
  ///   super.setUp()
  ///   URLSessionMock.installSharedSessionDispatcher()
  /// }
  /// ```
  public static func installSharedSessionDispatcher() {
    SharedSessionGate.install()
  }

  private func reportSharedSessionNotRouted(_ site: CallSite) {
    core.reporter.fail(
      "interceptingSharedSession cannot intercept URLSession.shared: it does not route through "
        + "the mock's dispatcher, because it was first used before the dispatcher was installed "
        + "(on Linux it keeps the protocol classes it saw then). Requests made through "
        + "URLSession.shared in this scope go to the network as usual. Call "
        + "URLSessionMock.installSharedSessionDispatcher() at the start of the test process, "
        + "before anything uses URLSession.shared, or give the code under test a session from "
        + "mock.makeURLSession() (or inject the mock).", at: site)
  }
}
