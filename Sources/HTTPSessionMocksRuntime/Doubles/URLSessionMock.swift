import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` that answers from stubs, instantly or on a clock, and records everything.
///
/// Inject it where the code under test takes `any HTTPSession`. `URLSessionMock()` answers only
/// what its stubs match, newest stub first; the canned forms (`URLSessionMock(jsonDict:)`,
/// `URLSessionMock(status:)`, ...) answer every request the same way, as DHURLSessionStub did:
///
/// ```swift
/// let mock = URLSessionMock()
/// mock.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
/// client.session = mock
/// ...
/// mock.verify(.get("/users/octocat"), called: .once)
/// ```
///
/// Each canned form is `URLSessionMock()` with one catch-all stub, `stub(.any, with: ...)`, so
/// stubs added later answer before it.
///
/// Delivery follows `URLSession`; with no delay the handler runs inside `resume()`, so a test
/// needs no waiting. A request that no stub matches fails the test at the line that created the
/// mock, and the code under test gets `URLError(.resourceUnavailable)` (see
/// ``unmatchedRequestPolicy``). <doc:GettingStarted> and <doc:MatchingAndVerifying> tell the
/// whole story.
public final class URLSessionMock: RecordingSession, Sendable {

  /// The scenario state every mock starts in: `"started"`.
  ///
  /// This is the state of the mock's own scenario, ``scenarioState``, which stubs written in
  /// Swift and the package's bundle files name. Named scenarios (WireMock's `scenarioName`) start
  /// in ``initialNamedScenarioState``, `"Started"`, WireMock's spelling. The two spellings are
  /// kept on purpose: each is what the files of its own kind already say, and changing either
  /// would change which stubs answer. A bundle written as WireMock mappings turns this state into
  /// `"Started"`.
  public static let initialScenarioState = "started"

  /// The state every named scenario starts in: `"Started"`, as in WireMock.
  ///
  /// The mock's own scenario starts in ``initialScenarioState`` instead, `"started"`; see there
  /// why the two differ.
  public static let initialNamedScenarioState = "Started"

  /// The task data tasks are: a ``MockTask``.
  public typealias DataTask = MockTask
  /// The task upload tasks are: a ``MockTask``.
  public typealias UploadTask = MockTask
  /// The task download tasks are: a ``MockTask``.
  public typealias DownloadTask = MockTask

  /// The record that ``RecordingSession``'s queries read: `requests`, `verify(_:called:)`, ...
  public let journal: RequestJournal
  /// The clock that delays run on.
  public let clock: any Clock<Duration>
  /// The request path: records, stubs, scenario state, delivery.
  let core: SessionCore
  var site: CallSite { core.ownerSite }
  /// The mock's slot in the URLProtocol bridge's table, once it has one (see `BridgeTable`).
  let bridgeSlot = Locked<Int?>(nil)
  /// The bridge's slots for sessions with another profile than the default (see
  /// ``BridgeProfile``).
  let bridgeProfileSlots = Locked<[BridgeProfile: Int]>([:])

  /// Creates a mock with no stubs: every request is unmatched until you add some.
  ///
  /// `clock` is the clock delayed answers wait on: `ContinuousClock` (real time) unless you pass
  /// a ``VirtualClock``. The source location defaults record the line that made the mock, where
  /// unmatched requests are reported.
  public convenience init(
    clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      clock: clock, voice: .code, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Creates a mock with no stubs whose reports speak with `voice`: the `stub-server`
  /// command's, or a replaying mock's (see ``ReportVoice``).
  package init(
    clock: (any Clock<Duration>)?, voice: ReportVoice, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.clock = clock ?? ContinuousClock()
    self.core = SessionCore(
      answering: .stubs, ownerName: "URLSessionMock",
      ownerSite: CallSite(fileID: fileID, filePath: filePath, line: line, column: column),
      clock: clock, voice: voice)
    self.journal = RequestJournal(core: core)
    MockVerificationScope.current?.register(self)
  }

  deinit {
    // Frees the mock's slot in the URLProtocol bridge's table, if it took one.
    if let slot = bridgeSlot.withLock({ $0 }) { BridgeTable.release(slot) }
    for slot in bridgeProfileSlots.withLock({ $0.values }) { BridgeTable.release(slot) }
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
      core.reporter.fail(
        "The stub for \(matcher.description(redacting: core.reportRedaction)) was given an empty list of responses; it will fail every "
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
    _ matcher: RequestMatcher, _ responder: StubTable.Responder, _ site: CallSite
  ) -> Stub {
    let problems = matcher.problems
    if !problems.isEmpty {
      core.reporter.fail(
        "The stub for \(matcher.description(redacting: core.reportRedaction)) can never match: "
          + problems.joined(separator: " "), at: site)
    }
    let id = core.withLock { $0.stubs.add(matcher, responder: responder, site: site) }
    return Stub(core: core, id: id, matcher: matcher, site: site)
  }

  /// Removes every stub. Their handles keep their ``Stub/callCount``.
  public func removeAllStubs() {
    let removed = core.withLock { state in
      let removed = state.stubs.registry
      state.stubs.registry = StubTable.Registry()
      state.stubs.registry.requestTransform = removed.requestTransform
      return removed
    }
    // Released here, outside the lock: a response closure's captures may run code in deinit.
    withExtendedLifetime(removed) {}
  }

  /// Removes `stubs`, handles this mock returned, in one step and in time linear in the
  /// mock's stubs however many go (the admin API's `DELETE /__admin/mappings` removes 100,000
  /// so). Their handles keep their ``Stub/callCount``.
  package func removeStubs(_ stubs: [Stub]) {
    let ids = Set(stubs.map(\.id))
    let removed = core.withLock { $0.stubs.registry.remove(ids) }
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
    get { core.withLock { $0.stubs.scenarioState } }
    set { core.withLock { $0.stubs.scenarioState = newValue } }
  }

  /// The state of the named scenario `name` (see ``Stub/inScenario(_:)``):
  /// ``initialNamedScenarioState`` until a stub of the scenario moves it or a test sets it.
  ///
  /// ```swift
  /// #expect(mock.scenarioState(of: "cart") == "full")
  /// ```
  public func scenarioState(of name: String) -> String {
    core.withLock { $0.stubs.scenarios.state(of: name) }
  }

  /// Moves the named scenario `name` to `state`; the other scenarios keep theirs.
  public func setScenarioState(_ state: String, of name: String) {
    core.withLock { $0.stubs.scenarios.set(state, of: name) }
  }

  /// Puts every scenario back in its first state: the default one in ``initialScenarioState``,
  /// each named one in ``initialNamedScenarioState``.
  public func resetScenarios() {
    core.withLock { $0.stubs.scenarios = StubTable.Scenarios() }
  }

  /// The named scenarios: every name a stub is tied to with ``Stub/inScenario(_:)`` (or a
  /// mapping's `scenarioName`) or that a test set, sorted.
  public var scenarioNames: [String] {
    core.withLock { state in
      var names = Set(state.stubs.scenarios.named.keys)
      for usage in state.stubs.usage.values {
        if let name = usage.scenario { names.insert(name) }
      }
      return names.sorted()
    }
  }

  /// The longest a whole transfer may take, as `URLSessionConfiguration`'s
  /// `timeoutIntervalForResource`; `nil` (the default) for no limit.
  ///
  /// A request's own timeout (`URLRequest.timeoutInterval`) is an idle timer, as in URLSession:
  /// it bounds each wait for the next piece of data (the head, each piece of a streamed body),
  /// so a stream that sends steadily lives on however long it lasts. This bounds the whole
  /// transfer from the request's start: the answer (or the stream's next piece) due after it
  /// fails with `URLError(.timedOut)` at that time on the mock's clock.
  ///
  /// ```swift
  /// let mock = URLSessionMock(clock: clock)
  /// mock.resourceTimeout = .seconds(300)  // as timeoutIntervalForResource = 300
  /// ```
  ///
  /// It applies to every door. A session routed to the mock with ``intercept(_:)`` or
  /// ``makeURLSession(configuration:delegate:delegateQueue:)`` brings its configuration's own
  /// `timeoutIntervalForResource` (and `timeoutIntervalForRequest`) instead, when they differ
  /// from URLSession's defaults.
  public var resourceTimeout: Duration? {
    get { core.resourceTimeout }
    set { core.resourceTimeout = newValue }
  }

  /// What happens to a request that no stub matches; ``UnmatchedRequestPolicy/fail`` by default.
  public var unmatchedRequestPolicy: UnmatchedRequestPolicy {
    get { core.withLock { $0.policy } }
    set {
      let old = core.withLock { state in
        defer { state.policy = newValue }
        return state.policy
      }
      // Released here, outside the lock: the policy may hold another session.
      withExtendedLifetime(old) {}
    }
  }

  /// Checks that every stub answered at least once, and names each one that never did, with
  /// where it was registered.
  @discardableResult
  public func verifyAllStubsUsed(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    guard let message = unusedStubsMessage() else { return true }
    core.reporter.fail(
      message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    return false
  }

  /// The report of stubs that never answered, or `nil` when every stub answered.
  func unusedStubsMessage() -> String? {
    let (unused, redaction) = core.withLock { ($0.stubs.unusedDefinitions, $0.reportRedaction) }
    guard !unused.isEmpty else { return nil }
    var message = "\(unused.count) stub(s) never answered a request:\n"
    for definition in unused {
      message +=
        "  - \(definition.matcher.description(redacting: redaction)) "
        + "(registered at \(definition.site))\n"
    }
    return message + NearMiss.sentSummary(journal.requests, redaction)
  }

  /// The stubs closest to `request`, closest first, each with why it did not answer (what the
  /// unmatched-request report lists); matched on a copy of the table, outside the lock.
  func nearMisses(for request: URLRequest) -> [(
    definition: StubTable.Definition, reasons: [String]
  )] {
    let (stubs, redaction) = core.withLock { ($0.stubs, $0.reportRedaction) }
    return stubs.nearMisses(for: request, redacting: redaction)
  }

  // MARK: - Doors

  /// Sends `request` through the mock's one request path on behalf of a door (whose traits
  /// are `door`), and writes the answer to `sink`; returns the task, already resumed
  /// (`cancel()` stops it). The core's one entry (`SessionCore.enter`), then the resume.
  @discardableResult
  package func send(
    _ request: URLRequest, kind: SessionEvent.TaskKind, door: DoorTraits,
    to sink: some ResponseSink
  ) -> MockTask {
    let task = core.enter(request, kind: kind, through: door, receiver: .sink(sink))
    task.resume()
    return task
  }

  /// Answers `request` with `error` on behalf of a door that cannot carry it (see
  /// `SessionCore.refuse(_:answering:)`): the request and the refusal are recorded like any
  /// other exchange, and the error goes to `sink`. Returns the task, already completed.
  @discardableResult
  package func refuse(
    _ request: URLRequest, kind: SessionEvent.TaskKind, door: DoorTraits, with error: URLError,
    to sink: some ResponseSink
  ) -> MockTask {
    let task = core.enter(request, kind: kind, through: door, receiver: .sink(sink))
    core.refuse(task, answering: Answer(error: error))
    return task
  }

  /// Answers `request` with `response` and `body` on behalf of a door that refuses it itself
  /// (the loopback server's answer to a WebSocket upgrade it cannot accept): recorded like any
  /// other exchange, and handed to `sink`. Returns the task, already completed.
  @discardableResult
  package func refuse(
    _ request: URLRequest, kind: SessionEvent.TaskKind, door: DoorTraits,
    answering response: HTTPURLResponse, body: Data, to sink: some ResponseSink
  ) -> MockTask {
    let task = core.enter(request, kind: kind, through: door, receiver: .sink(sink))
    core.refuse(task, answering: Answer(data: body, response: response, error: nil))
    return task
  }
}
