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
  /// On Linux a data delegate of this session gets a streamed body in one piece at its end, so
  /// that completion handlers and `data(for:)` get it whole; for a delegate that reads a stream
  /// piece by piece (a server-sent-events client), use
  /// ``makeURLSession(configuration:delegate:delegateQueue:deliveringPiecesAsTheyCome:)``.
  ///
  /// > Important: A URLProtocol never sees the body of `uploadTask(with:from:)` or
  /// > `upload(for:from:)`, nor the configuration's `httpAdditionalHeaders`: the mock adds
  /// > the headers that `configuration` holds when this is called to the requests it routes and
  /// > records, never a body. See <doc:Interception> for the limits of URL loading, and how
  /// > downloads and body pieces behave on Linux.
  ///
  /// > Important: On Apple platforms, URL loading makes its protocol objects away from the
  /// > test's task, so what the mock reports is recorded in the test context of this call: make
  /// > the session inside the `withKnownIssue` that expects a report. See
  /// > <doc:Interception#On-Apple-platforms>.
  ///
  /// > Important: On watchOS, URL loading does not use custom `URLProtocol` classes, so the
  /// > mock does not answer this session: inject the mock as an `HTTPSession` there.
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

  /// A real `URLSession` whose every request this mock answers, saying whether its delegate
  /// reads bodies piece by piece.
  ///
  /// As ``makeURLSession(configuration:delegate:delegateQueue:)``. With
  /// `deliveringPiecesAsTheyCome: true`, each piece of a streamed body (an event of
  /// ``StubResponse/events(_:every:status:headers:)``, a piece of
  /// ``StubResponse/dribbled(inChunks:over:)``) reaches the session's data delegate when the
  /// mock's clock releases it, on Linux too: the way a server-sent-events client reads.
  ///
  /// ```swift
  /// let session = mock.makeURLSession(delegate: eventSource, deliveringPiecesAsTheyCome: true)
  /// session.dataTask(with: feedRequest).resume()  // each event reaches the delegate on the clock
  /// ```
  ///
  /// Before each `advance` of the clock, use the hand-offs that
  /// ``intercept(_:deliveringPiecesAsTheyCome:)`` describes: `waitForRequests` for the request,
  /// the delegate's own progress for each piece, and
  /// ``RecordingSession/waitForExchanges(count:timeout:fileID:filePath:line:column:)`` once the
  /// client leaves.
  ///
  /// > Important: On Linux, URL loading hands a completion handler and `data(for:)` only the
  /// > last piece of a body that arrives in pieces, and a protocol object cannot tell which kind
  /// > of task it serves. So with `true`, such tasks of this session get only a streamed body's
  /// > last piece there; use a session without it for them. See
  /// > <doc:Interception#Limits-of-URL-loading>.
  ///
  /// - Parameters:
  ///   - configuration: The configuration to start from; `.ephemeral` by default.
  ///   - delegate: The session's delegate, as for `URLSession(configuration:delegate:delegateQueue:)`.
  ///   - delegateQueue: The queue the delegate and completion handlers run on; a serial queue of
  ///     the session's own if `nil`.
  ///   - deliveringPiecesAsTheyCome: Whether the session's tasks read bodies through its data
  ///     delegate.
  public func makeURLSession(
    configuration: URLSessionConfiguration = .ephemeral,
    delegate: (any URLSessionDelegate)? = nil, delegateQueue: OperationQueue? = nil,
    deliveringPiecesAsTheyCome: Bool
  ) -> URLSession {
    let copy = (configuration.copy() as? URLSessionConfiguration) ?? configuration
    intercept(copy, deliveringPiecesAsTheyCome: deliveringPiecesAsTheyCome)
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
  /// after which corelibs (Linux) makes the protocol object on a background thread rather than
  /// on the task that resumed the request.
  ///
  /// What the mock reports while it answers (an unmatched request) is recorded in the test that
  /// made the request, inside its `withKnownIssue`, when URL loading makes the protocol object
  /// on the test's task (Linux); elsewhere, in the test context of the last call of this method
  /// (or of ``makeURLSession(configuration:delegate:delegateQueue:)``) made in a test for this
  /// mock, which the mock keeps until it goes.
  ///
  /// > Important: On Apple platforms, URL loading makes its protocol objects away from the
  /// > test's task: call this inside the `withKnownIssue` that expects a report. See
  /// > <doc:Interception#On-Apple-platforms>.
  ///
  /// > Important: On watchOS, URL loading does not use custom `URLProtocol` classes, so the
  /// > mock does not answer the sessions made from the configuration: inject the mock as an
  /// > `HTTPSession` there.
  ///
  /// > Warning: Sessions made from the configuration before this call are not affected: a
  /// > `URLSession` copies its configuration when it is made, so its requests go to the real
  /// > network, and nothing reports it. Call this before the code makes its session, and end
  /// > the test with ``verifyAllStubsUsed(fileID:filePath:line:column:)``
  /// > (or the `.verifyingMocks` trait): a stub that no request reached fails the test, which
  /// > is how a session that bypassed the mock shows itself.
  public func intercept(_ configuration: URLSessionConfiguration) {
    intercept(configuration, deliveringPiecesAsTheyCome: false)
  }

  /// Routes every request of the sessions made from `configuration` to this mock, saying
  /// whether those sessions read bodies piece by piece through a data delegate.
  ///
  /// As ``intercept(_:)``. Pass `deliveringPiecesAsTheyCome: true` for a library that makes its
  /// own session with a data delegate (`URLSessionDataDelegate`) from the configuration you hand
  /// it, as server-sent-event clients do: each piece of a streamed body (an event of
  /// ``StubResponse/events(_:every:status:headers:)``, a piece of
  /// ``StubResponse/dribbled(inChunks:over:)``) then reaches the delegate when the mock's clock
  /// releases it, on every platform.
  ///
  /// ```swift
  /// let configuration = URLSessionConfiguration.ephemeral
  /// mock.intercept(configuration, deliveringPiecesAsTheyCome: true)
  /// let source = EventSource(configuration: configuration)  // its own session and delegate
  /// ```
  ///
  /// > Important: On Linux, URL loading hands a completion handler (and `data(for:)`) only the
  /// > last piece of a body that arrives in pieces. With `false` (``intercept(_:)``) the bridge
  /// > holds a streamed body back and hands it over whole at its end, which every kind of task
  /// > receives whole; with `true` a completion-handler or async task of these sessions gets
  /// > only the stream's last piece there. Apple's URL loading appends the pieces, so there
  /// > both ways deliver each piece as it comes. See <doc:Interception#Limits-of-URL-loading>.
  ///
  /// The configuration's `timeoutIntervalForRequest` and `timeoutIntervalForResource`, which a
  /// protocol object never sees, are read here too: the mock applies them to these sessions'
  /// requests on its clock (a request's own `timeoutInterval` other than the default 60 s comes
  /// first). So are its `httpAdditionalHeaders`, which the mock adds to each request that does
  /// not set them itself, as URLSession sends them, before it routes and records it. Set them
  /// before this call.
  ///
  /// A test drives such a stream in two hand-offs: advance the clock once
  /// ``RecordingSession/waitForRequests(count:timeout:fileID:filePath:line:column:)`` has
  /// returned for the request (the stream's next step is then on the clock), then wait on
  /// the client's own progress before the next step; when the client leaves (it cancels, a
  /// library closes its stream), wait with
  /// ``RecordingSession/waitForExchanges(count:timeout:fileID:filePath:line:column:)`` before
  /// reading ``Exchange/endedByClient`` or advancing the clock again. See
  /// <doc:StreamsAndWebSockets#Handing-off-to-the-clock>.
  ///
  /// - Parameters:
  ///   - configuration: The configuration that the code under test makes its session from.
  ///   - deliveringPiecesAsTheyCome: Whether the sessions read bodies through a data delegate.
  public func intercept(
    _ configuration: URLSessionConfiguration, deliveringPiecesAsTheyCome: Bool
  ) {
    let profile = BridgeProfile(configuration, deliversPieces: deliveringPiecesAsTheyCome)
    let bridge: AnyClass = BridgeTable.protocolClass(
      for: self, context: BridgeTable.captureContext(), profile: profile)
    let others = (configuration.protocolClasses ?? []).filter { !($0 is MockURLProtocol.Type) }
    configuration.protocolClasses = [bridge] + others
    configuration.urlCache = nil
  }

  /// Runs `body` with `URLSession.shared` answered by this mock, and returns what it returns.
  ///
  /// For code that calls `URLSession.shared` where you cannot change it (inside a third-party
  /// SDK): for the duration of `body`, the requests that `body` makes through
  /// `URLSession.shared` (and whatever else honours `URLProtocol.registerClass`) are answered by
  /// this mock, and the interception ends when `body` returns or throws.
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
  /// The scope's requests are those resumed in its task tree: in `body`, its child tasks and
  /// the tasks `Task { }` makes there, with `async`/`await` or a completion-handler task resumed
  /// there. A request resumed on another Swift task (a parallel test, `Task.detached`, a task
  /// that outlived an earlier scope) goes on as if no scope were open. A request resumed where
  /// no Swift task runs (inside a completion handler, on a dispatch queue or a thread of its
  /// own) cannot be told apart: the scope answers it, and when the scope ends it reports one
  /// warning to its test naming such requests. What the mock reports while it answers (an
  /// unmatched request) is recorded in the scope's test, whichever thread URL loading uses.
  ///
  /// > Important: A scope serializes the process's use of `URLSession.shared`: while it is
  /// > active, it answers every request of `URLSession.shared` that it cannot place, whichever
  /// > test made it. Run the tests that use `URLSession.shared` one at a time (one suite marked
  /// > `.serialized`, with the tests that open scopes), or inject a session. How much the scope
  /// > can tell depends on where URL loading asks for a protocol: corelibs Foundation (Linux)
  /// > asks inside the task's `resume()`, on the caller's thread; URL loading that asks on a
  /// > thread of its own leaves every request to the warning (see
  /// > <doc:Interception#On-Apple-platforms>).
  ///
  /// > Important: On Linux, `URLSession.shared` copies the registered protocol classes when it
  /// > is first used. If anything used it before the first scope, its requests cannot be
  /// > intercepted: the scope then fails the test, saying so. Call
  /// > ``installSharedSessionDispatcher()`` at the start of the test process, before anything
  /// > touches `URLSession.shared`, or inject the mock (``makeURLSession(configuration:delegate:delegateQueue:)``).
  ///
  /// > Important: On watchOS, URL loading does not use custom `URLProtocol` classes, so a scope
  /// > does not answer `URLSession.shared` there: inject the mock as an `HTTPSession`.
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
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let token = await SharedSessionGate.enter(self)
    defer { reportUnplaced(SharedSessionGate.leave(token), at: site) }
    if !(await SharedSessionGate.sharedSessionRoutes()) { reportSharedSessionNotRouted(site) }
    return try await SharedSessionGate.$heldToken.withValue(token) { try await body() }
  }

  /// Runs `body` with `URLSession.shared` answered by this mock, and returns what it returns;
  /// the synchronous form, which blocks its thread while another scope is active.
  ///
  /// See ``interceptingSharedSession(isolation:fileID:filePath:line:column:_:)``, and its notes
  /// on Linux, Apple platforms and watchOS.
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
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let token = SharedSessionGate.enterBlocking(self)
    defer { reportUnplaced(SharedSessionGate.leave(token), at: site) }
    if !SharedSessionGate.sharedSessionRoutesBlocking() { reportSharedSessionNotRouted(site) }
    return try SharedSessionGate.$heldToken.withValue(token) { try body() }
  }

  /// Installs the dispatcher that lets ``interceptingSharedSession(isolation:fileID:filePath:line:column:_:)``
  /// answer `URLSession.shared`; call it once, at the start of the test process.
  ///
  /// On Linux, `URLSession.shared` copies the registered protocol classes the first time it is
  /// used, so the dispatcher must be registered before that. (Corelibs also makes it when
  /// `invalidateAndCancel()` is called on any session.) The first scope installs it too,
  /// which is enough when nothing used `URLSession.shared` before; call this where the test
  /// process starts (an XCTest `override class func setUp()`, the initializer of a test
  /// suite's shared fixture, a test host's startup) when something might. It is safe to call
  /// more than once and from any thread. Outside a scope the dispatcher declines every request,
  /// so `URLSession.shared` behaves as if it were not there. On watchOS, URL loading does not
  /// use it.
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

  /// Warns, once per scope, about the requests it answered without being able to tell that they
  /// came from its task tree.
  private func reportUnplaced(_ unplaced: SharedSessionGate.Unplaced, at site: CallSite) {
    guard unplaced.count > 0 else { return }
    let more = unplaced.count - unplaced.requests.count
    let list =
      unplaced.requests.map { "\n  \($0)" }.joined()
      + (more > 0 ? "\n  and \(more) more" : "")
    let requests = unplaced.count == 1 ? "1 request" : "\(unplaced.count) requests"
    core.reporter.warn(
      "interceptingSharedSession answered \(requests) through URLSession.shared that it could "
        + "not tell came from this scope:\(list)\nThey were made where no Swift task runs (a "
        + "completion handler, a dispatch queue, a thread of its own), so the scope's mark was "
        + "not there to read. While a scope is active it answers every such request in the "
        + "process, whichever test made it: the shared-session scope serializes the process's "
        + "use of URLSession.shared. If these came from this test, nothing is wrong (make them "
        + "from the scope's task, with async/await or a task resumed in the scope, and this "
        + "warning goes). If another test used URLSession.shared at the same time, it got this "
        + "mock's answers: run the tests that use URLSession.shared one at a time (one suite, "
        + "marked .serialized), or give the code under test a session from "
        + "mock.makeURLSession().", at: site)
  }

  private func reportSharedSessionNotRouted(_ site: CallSite) {
    core.reporter.fail(
      "interceptingSharedSession cannot intercept URLSession.shared: it does not route through "
        + "the mock's dispatcher, because it was first used before the dispatcher was installed "
        + "(on Linux it keeps the protocol classes it saw then; calling invalidateAndCancel() "
        + "on any session also makes it there). Requests made through "
        + "URLSession.shared in this scope go to the network as usual. Call "
        + "URLSessionMock.installSharedSessionDispatcher() at the start of the test process, "
        + "before anything uses URLSession.shared, or give the code under test a session from "
        + "mock.makeURLSession() (or inject the mock).", at: site)
  }
}
