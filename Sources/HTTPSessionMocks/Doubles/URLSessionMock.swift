import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` that answers from stubs, instantly or on a clock, and records everything.
///
/// The simplest form answers every request the same way, as DHURLSessionStub did:
///
/// ```swift
/// let client = APIClient()
/// client.session = URLSessionMock(jsonDict: ["login": "octocat", "id": 1])!
/// client.fetchProfile(name: "octocat") { user, error in ... }  // runs inside resume()
/// ```
///
/// A mock made with `URLSessionMock()` answers only what its stubs match, newest stub first:
///
/// ```swift
/// let mock = URLSessionMock()
/// mock.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
/// mock.stub(.post("/repos/{owner}/{repo}/issues"), with: .status(201))
/// ...
/// mock.verify(.get("/users/octocat"), called: .once)
/// ```
///
/// Delivery follows `URLSession`: nothing happens until `resume()`; the handler runs exactly
/// once; `cancel()` before or during delivery delivers `URLError(.cancelled)`. With no delay the
/// handler runs synchronously inside `resume()`, so a test needs no waiting; with a delay it
/// runs on the mock's clock (pass a ``VirtualClock`` to control it).
///
/// A request that no stub matches fails the test, pointing at the line that created the mock,
/// and the code under test gets `URLError(.resourceUnavailable)`; see ``unmatchedRequestPolicy``.
public final class URLSessionMock: RecordingSession, TaskDriver, Sendable {

  /// The scenario state every mock starts in: `"started"`.
  public static let initialScenarioState = "started"

  /// What the mock saw: requests, the call log, unmatched requests.
  public let journal: RequestJournal
  /// The clock that delays run on.
  public let clock: any Clock<Duration>
  /// Whether the mock was made without a clock, so that its delays take real time.
  let delaysRunInRealTimeByDefault: Bool
  let router: StubRouter
  /// Kept apart from the journal, which the mock's tasks hold: a pass-through policy holds
  /// another session, and through the journal that would make a cycle with its tasks.
  private let policy = Locked(UnmatchedRequestPolicy.fail)
  let site: CallSite

  /// Creates a mock with no stubs: every request is unmatched until you add some.
  ///
  /// `clock` is the clock delayed answers wait on: `ContinuousClock` (real time) unless you pass
  /// a ``VirtualClock``. The source location defaults record the line that made the mock, where
  /// unmatched requests are reported.
  public init(
    clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.clock = clock ?? ContinuousClock()
    self.delaysRunInRealTimeByDefault = clock == nil
    self.site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    self.journal = RequestJournal(ownerName: "URLSessionMock", ownerSite: site)
    self.router = StubRouter(journal: journal)
    MockVerificationScope.current?.register(self)
  }

  /// Creates a mock that gives every request this answer, in DHURLSessionStub's form.
  ///
  /// With no error and no response, the answer is status 200 for the request's own URL. With an
  /// error, the response is `nil` unless one is given.
  ///
  /// `delay` is how long after `resume()` the answer arrives, on `clock`; `nil` (or zero)
  /// answers synchronously inside `resume()`. `clock` is real time (`ContinuousClock`) if `nil`.
  ///
  /// ```swift
  /// let clock = VirtualClock()
  /// let mock = URLSessionMock(data: body, response: nil, error: nil, delay: .seconds(30), clock: clock)
  /// ```
  public convenience init(
    data: Data?, response: URLResponse?, error: (any Error)?, delay: Duration? = nil,
    clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      answering: StubResponse(data: data, response: response, error: error), delay: delay,
      clock: clock, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Creates a mock that answers every request with this dictionary as JSON, or returns `nil`
  /// if `JSONSerialization` cannot encode it.
  ///
  /// With no response and no error, the answer is status 200 with
  /// `Content-Type: application/json`.
  public convenience init?(
    jsonDict: [String: Any], response: URLResponse? = nil, error: (any Error)? = nil,
    delay: Duration? = nil, clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) {
    guard JSONSerialization.isValidJSONObject(jsonDict),
      let body = try? JSONSerialization.data(withJSONObject: jsonDict, options: [.sortedKeys])
    else { return nil }
    let answer =
      response == nil && error == nil
      ? StubResponse.data(body, headers: ["Content-Type": "application/json"])
      : StubResponse(data: body, response: response, error: error)
    self.init(
      answering: answer, delay: delay, clock: clock, fileID: fileID, filePath: filePath,
      line: line, column: column)
  }

  /// Creates a mock that answers every request with `value` encoded as JSON.
  public convenience init(
    json value: some Encodable & Sendable, status: Int = 200, headers: [String: String] = [:],
    delay: Duration? = nil, clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      answering: .json(value, status: status, headers: headers), delay: delay, clock: clock,
      fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Creates a mock that answers every request with status `status` and an empty body.
  public convenience init(
    status: Int, headers: [String: String] = [:], delay: Duration? = nil,
    clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      answering: .status(status, headers: headers), delay: delay, clock: clock, fileID: fileID,
      filePath: filePath, line: line, column: column)
  }

  /// Creates a mock that fails every request with the transport error `error`.
  public convenience init(
    error: any Error, delay: Duration? = nil, clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) {
    self.init(
      answering: .error(error), delay: delay, clock: clock, fileID: fileID, filePath: filePath,
      line: line, column: column)
  }

  /// Creates a mock whose one catch-all stub gives `answer`.
  private convenience init(
    answering answer: StubResponse, delay: Duration?, clock: (any Clock<Duration>)?,
    fileID: StaticString, filePath: StaticString, line: UInt, column: UInt
  ) {
    self.init(
      clock: clock, fileID: fileID, filePath: filePath, line: line,
      column: column)
    stub(
      .any, with: delay.map { answer.delayed(by: $0) } ?? answer, fileID: fileID,
      filePath: filePath, line: line, column: column)
  }

  // MARK: - Stubs

  /// Answers requests that `matcher` accepts with `response`.
  ///
  /// The newest matching stub answers, so a test can override defaults set up earlier.
  @discardableResult
  public func stub(
    _ matcher: RequestMatcher, with response: StubResponse, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Stub {
    addStub(
      matcher, .sequence([response]),
      CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Answers requests that `matcher` accepts with `responses` in order; the last one keeps
  /// answering.
  ///
  /// ```swift
  /// mock.stub(.get("/flaky"), with: [.error(URLError(.networkConnectionLost)), .status(503), .json(ok)])
  /// ```
  @discardableResult
  public func stub(
    _ matcher: RequestMatcher, with responses: [StubResponse], fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Stub {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    if responses.isEmpty {
      journal.reporter.fail(
        "The stub for \(matcher) was given an empty list of responses; it will fail every "
          + "request it matches. Give at least one StubResponse.", at: site)
    }
    return addStub(matcher, .sequence(responses), site)
  }

  /// Answers requests that `matcher` accepts with a response built for each request.
  ///
  /// ```swift
  /// mock.stub(.post("/echo")) { request in .data(request.httpBody ?? Data()) }
  /// ```
  @discardableResult
  public func stub(
    _ matcher: RequestMatcher, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column,
    respond: @escaping @Sendable (URLRequest) -> StubResponse
  ) -> Stub {
    addStub(
      matcher, .dynamic { request, _ in respond(request) },
      CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Answers requests that `matcher` accepts with a response built from each request and the
  /// values of the pattern's `{name}` parameters.
  ///
  /// ```swift
  /// mock.stub(.get("/users/{login}")) { request, parameters in
  ///   .json(User(login: parameters["login"]!, id: 1))
  /// }
  /// ```
  @discardableResult
  public func stub(
    _ matcher: RequestMatcher, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column,
    respond: @escaping @Sendable (URLRequest, [String: String]) -> StubResponse
  ) -> Stub {
    addStub(
      matcher, .dynamic(respond),
      CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  private func addStub(
    _ matcher: RequestMatcher, _ responder: StubRouter.Responder, _ site: CallSite
  )
    -> Stub
  {
    let problems = matcher.problems
    if !problems.isEmpty {
      journal.reporter.fail(
        "The stub for \(matcher) can never match: " + problems.joined(separator: " "), at: site)
    }
    let id = router.add(matcher, responder: responder, site: site)
    return Stub(router: router, id: id, matcher: matcher, site: site)
  }

  /// Removes every stub. Their handles keep their ``Stub/callCount``.
  public func removeAllStubs() {
    let removed = router.state.withLock { state in
      defer { state.table = StubRouter.Table() }
      return state.table
    }
    // Released here, outside the lock: a response closure's captures may run code in deinit.
    withExtendedLifetime(removed) {}
  }

  /// The mock's scenario state: stubs limited with ``Stub/whenState(_:)`` answer only in their
  /// state, and stubs with ``Stub/willSetState(_:)`` move it when they answer.
  ///
  /// It starts as ``initialScenarioState``; a test may also set it directly.
  ///
  /// ```swift
  /// mock.stub(.get("/me"), with: .status(401)).whenState("started")
  /// mock.stub(.post("/login"), with: .status(200)).willSetState("logged in")
  /// mock.stub(.get("/me"), with: .json(me)).whenState("logged in")
  /// ```
  public var scenarioState: String {
    get { router.state.withLock { $0.scenarioState } }
    set { router.state.withLock { $0.scenarioState = newValue } }
  }

  /// What happens to a request that no stub matches; ``UnmatchedRequestPolicy/fail`` by default.
  public var unmatchedRequestPolicy: UnmatchedRequestPolicy {
    get { policy.withLock { $0 } }
    set { policy.withLock { $0 = newValue } }
  }

  /// The requests that no stub matched.
  public var unmatchedRequests: [URLRequest] { journal.unmatchedRequests }

  /// Checks that every stub answered at least once, and names each one that never did, with
  /// where it was registered.
  @discardableResult
  public func verifyAllStubsUsed(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    guard let message = unusedStubsMessage() else { return true }
    journal.reporter.fail(
      message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
  }

  /// The report of stubs that never answered, or `nil` when every stub answered.
  func unusedStubsMessage() -> String? {
    let unused = router.unusedDefinitions()
    guard !unused.isEmpty else { return nil }
    var message = "\(unused.count) stub(s) never answered a request:\n"
    for definition in unused {
      message += "  - \(definition.matcher) (registered at \(definition.site))\n"
    }
    return message + NearMiss.sentSummary(journal.requests)
  }

  /// Checks that every request was answered by a stub, and reports those that were not.
  @discardableResult
  public func verifyNoUnmatchedRequests(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    journal.verifyNoUnmatchedRequests(
      fileID: fileID, filePath: filePath, line: line, column: column)
  }

  // MARK: - HTTPSession

  /// Creates a suspended task that answers `request` from the stubs when resumed.
  public func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    MockTask(
      request: request, kind: .data, handler: .data(completionHandler), journal: journal,
      driver: self)
  }

  /// Creates a suspended task that answers a GET of `url` from the stubs when resumed.
  public func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  /// Creates a suspended upload task; the recorded request carries `bodyData` as its
  /// `httpBody`, so matchers and verifications see it.
  public func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    var sent = request
    sent.httpBody = bodyData
    return MockTask(
      request: sent, kind: .upload, handler: .data(completionHandler), journal: journal,
      driver: self)
  }

  /// Creates a suspended download task: the answer's body is written to a fresh temporary
  /// file, whose URL the handler gets; the file is deleted when the handler returns.
  public func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    MockTask(
      request: request, kind: .download, handler: .download(keepsFile: false, completionHandler),
      journal: journal, driver: self)
  }

  /// Sends `request` and returns the stubbed body and response.
  ///
  /// Cancelling the calling Swift task cancels the request and throws `URLError(.cancelled)`.
  public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await AsyncBridge.data { dataTask(with: request, completionHandler: $0) }
  }

  /// Fetches `url` with a GET and returns the stubbed body and response.
  public func data(from url: URL) async throws -> (Data, URLResponse) {
    try await data(for: URLRequest(url: url))
  }

  /// Uploads `bodyData` with `request` and returns the stubbed body and response.
  public func upload(for request: URLRequest, from bodyData: Data) async throws -> (
    Data, URLResponse
  ) {
    try await AsyncBridge.data { uploadTask(with: request, from: bodyData, completionHandler: $0) }
  }

  /// Writes the stubbed body for `request` to a fresh temporary file and returns its URL; the
  /// caller owns the file.
  public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await AsyncBridge.file { handler in
      MockTask(
        request: request, kind: .download, handler: .download(keepsFile: true, handler),
        journal: journal, driver: self)
    }
  }

  // MARK: - The path of a request: record (in MockTask.resume) → route → answer → schedule → deliver

  func planResume(of task: MockTask, in journal: inout RequestJournal.State) -> ResumePlan {
    journal.routing.routeWithoutUserCode(task.originalRequest).map(ResumePlan.routed) ?? .undecided
  }

  func taskDidResume(_ task: MockTask, plan: ResumePlan) -> Bool {
    let request = task.originalRequest
    let routed: StubRouter.Claim?
    switch plan {
    case .routed(let claim): routed = claim
    case .undecided: routed = router.route(request)
    }
    guard let claim = routed else {
      handleUnmatched(task)
      return false
    }
    let definition = claim.definition
    let response: StubResponse
    switch definition.responder {
    case .sequence(let responses):
      guard !responses.isEmpty else {
        failInvalid(task, "The stub has no responses.", site: definition.site)
        return false
      }
      // Played in order; the last one keeps answering.
      response = responses[min(claim.callNumber, responses.count) - 1]
    case .dynamic(let build):
      response = build(request, claim.parameters)
    }
    return answer(task, with: response, site: definition.site)
  }

  func taskDidCancel(_ task: MockTask, wasRunning: Bool) {
    task.finishCancelled()
  }

  /// Resolves and schedules `response`; returns whether it was delivered (and the resume
  /// settled) synchronously.
  @discardableResult
  private func answer(_ task: MockTask, with response: StubResponse, site: CallSite) -> Bool {
    switch response.resolve(for: task.originalRequest) {
    case .invalid(let problem):
      failInvalid(task, problem, site: site)
      return false
    case .answer(let data, let urlResponse, let error):
      return schedule(
        task, Answer(data: data, response: urlResponse, error: error), after: response.delay,
        site: site)
    }
  }

  /// Warns once per mock that a delay takes real time because the mock has no clock.
  private func warnAboutRealTime(_ delay: Duration, site: CallSite) {
    let first = journal.withLock { state -> Bool in
      defer { state.warnedAboutRealTimeDelay = true }
      return !state.warnedAboutRealTimeDelay
    }
    guard first else { return }
    let message =
      "This stub's answer is delayed by \(delay) of real time: the URLSessionMock created at "
      + "\(self.site) has no clock, so it waits on ContinuousClock. To control the delay from "
      + "the test, create the mock with URLSessionMock(clock: clock) and advance that "
      + "VirtualClock; pass clock: ContinuousClock() to mean real time."
    journal.reporter.warn(message, at: site)
  }

  private func failInvalid(_ task: MockTask, _ problem: String, site: CallSite) {
    journal.reporter.fail(
      "The stub registered here cannot answer \(task.originalRequest.summary): \(problem)",
      at: site)
    task.finish(
      data: nil, response: nil,
      error: URLError(.resourceUnavailable, for: task.originalRequest, description: problem),
      yieldingToCancel: true)
  }

  private func handleUnmatched(_ task: MockTask) {
    let request = task.originalRequest
    let policy = unmatchedRequestPolicy.kind
    if case .fail = policy {
      journal.recordUnmatched(request, reported: true)
    } else {
      journal.recordUnmatched(request, reported: false)
    }
    switch policy {
    case .fail:
      let message = NearMiss.unmatchedReport(request, router.nearMisses(for: request))
      journal.reporter.fail(message, at: site)
      task.finish(
        data: nil, response: nil,
        error: URLError(
          .resourceUnavailable, for: request,
          description: "URLSessionMock: no stub matches \(request.summary)"),
        yieldingToCancel: true)
    case .respond(let response):
      answer(task, with: response, site: site)
    case .passThrough(let session):
      if !PassThrough.forward(task, to: session) {
        journal.reporter.fail(
          "\(request.summary) was passed through \(PassThrough.maximumDepth) sessions in a row: "
            + "the unmatched-request policy of this URLSessionMock leads back to itself (directly "
            + "or through a SpySession). Pass through to a different session.", at: site)
      }
    }
  }

  /// Delivers `answer` now (settling the resume in the same critical region, and returning
  /// `true`) or schedules it on the clock (returning `false`).
  private func schedule(
    _ task: MockTask, _ answer: Answer, after delay: Duration?, site: CallSite
  ) -> Bool {
    guard let delay, delay > .zero else {
      answer.deliver(to: task, settlingResume: true)
      return true
    }
    if delaysRunInRealTimeByDefault { warnAboutRealTime(delay, site: site) }
    if let virtual = clock as? VirtualClock {
      let id = virtual.schedule(
        after: delay,
        onStall: {
          let stalled = "URLSessionMock: nothing advanced the VirtualClock to this answer"
          let error = URLError(.timedOut, for: task.originalRequest, description: stalled)
          task.finish(data: nil, response: nil, error: error, yieldingToCancel: true)
        },
        { answer.deliver(to: task) })
      task.setCancelPending { [weak virtual] in virtual?.cancelScheduled(id) }
    } else {
      let clock = clock
      let timer = Task {
        do { try await clock.sleep(for: delay) } catch { return }
        answer.deliver(to: task)
      }
      task.setCancelPending { timer.cancel() }
    }
    return false
  }
}
