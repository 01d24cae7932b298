import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The process-wide state of `interceptingSharedSession`: the second of the package's two
/// contained exceptions to "no global state" (the first is ``BridgeTable``).
///
/// Only one scope is active at a time in the process. A scope entered while another is active
/// waits its turn, first come first served (the async form suspends; the synchronous form
/// blocks its thread); the one that leaves hands the turn straight to the next. A scope entered
/// inside the active one, on the same task, does not wait: its mock answers until it ends, then
/// the outer one's again. With no scope active ``SharedSessionDispatcher`` is inert.
///
/// Which requests the active scope takes is decided in ``admits(_:)``, from the task-local
/// ``heldToken`` of the code that resumes the URLSession task:
/// - the scope's own token: the request comes from the scope's task tree (its body, child tasks,
///   `Task { }` made in it), and the scope answers it;
/// - no token but a Swift task, or another scope's token: it comes from elsewhere (another test,
///   `Task.detached`, a task made in a scope that has ended), and the dispatcher declines it;
/// - no token and no Swift task (a completion handler, a dispatch queue, a thread of its own): it
///   cannot tell. The scope answers it (while a scope is active, it has the process's
///   `URLSession.shared`), and names it in one warning when the scope ends.
package enum SharedSessionGate {
  /// A scope waiting for its turn: an async one suspends; a synchronous one blocks its thread on
  /// a semaphore, which waits as no lock can.
  private enum Waiter {
    case suspended(CheckedContinuation<Void, Never>)
    case blocked(DispatchSemaphore)

    func wake() {
      switch self {
      case .suspended(let continuation): continuation.resume()
      case .blocked(let semaphore): semaphore.signal()
      }
    }
  }

  /// One scope of the active turn: the outermost, or one nested in it.
  private struct Level {
    let mock: URLSessionMock
    /// The requests this scope answered without being able to tell where they came from: the
    /// first ``Unplaced/listed`` as `METHOD URL`, and how many in all.
    var unplaced = Unplaced()
  }

  /// The requests a scope answered without being able to tell where they came from.
  struct Unplaced {
    /// How many requests are listed by name at most.
    static let listed = 10

    var requests: [String] = []
    var count = 0

    mutating func note(_ request: URLRequest) {
      count += 1
      if requests.count < Self.listed { requests.append(request.summary) }
    }
  }

  private struct Owner {
    let token: Int
    /// The test context of the outermost scope, where the dispatcher's reports are recorded.
    let relay: TestContextRelay?
    /// The scope and the scopes nested in it: the last one answers.
    var levels: [Level]
  }

  /// A request that ``admits(_:)`` took, waiting for URL loading to start it.
  private struct Ticket {
    let request: URLRequest
    /// The turn it was taken for.
    let token: Int
    /// Whether it came from that turn's task tree (`false`: the dispatcher could not tell).
    let placed: Bool
  }

  private struct State {
    var owner: Owner?
    var queue: [(token: Int, mock: URLSessionMock, relay: TestContextRelay?, waiter: Waiter)] = []
    var nextToken = 1
    /// Requests taken in `canInit` and not started yet, oldest first.
    var tickets: [Ticket] = []
    /// Whether `URLSession.shared` routes through the dispatcher, once the probe has told.
    var routes: Bool?
    /// Tests waiting for scopes to queue up (``waitUntilWaiting(_:)``).
    var observers: [(id: ObjectIdentifier, count: Int, continuation: RealTimeWait.Continuation)] =
      []

    /// The observers that the queue's length now satisfies, taken out.
    mutating func satisfiedObservers() -> [RealTimeWait.Continuation] {
      let met = observers.filter { $0.count <= queue.count }
      observers.removeAll { $0.count <= queue.count }
      return met.map(\.continuation)
    }
  }

  /// How many taken requests wait to be started at most; the oldest goes first. A ticket is
  /// kept after its turn ends, so that a request started late is refused rather than answered
  /// by the next scope's mock; only requests that URL loading asked about and never started (a
  /// task cancelled before it began) are left behind.
  private static let maximumTickets = 256

  private static let state = Locked(State())
  /// Whether the dispatcher is registered. A lock of its own: registering takes Foundation's
  /// lock, under which Foundation calls `canInit`, which takes `state`'s; the two are never
  /// held together the other way round.
  private static let installed = Locked(false)

  /// The turn of the scope that the current task is inside, if any.
  @TaskLocal static var heldToken: Int?

  // MARK: Placing requests

  /// Whether the active scope takes `request` (the dispatcher's `canInit`): `false` with no
  /// scope active, and for a request the gate can tell comes from outside the scope's task
  /// tree. Corelibs asks it inside `resume()`, on the caller's thread, so ``heldToken`` is the
  /// caller's.
  static func admits(_ request: URLRequest) -> Bool {
    let held = heldToken
    let onATask = withUnsafeCurrentTask { $0 != nil }
    return state.withLock { state in
      guard let owner = state.owner else { return false }
      let placed = held == owner.token
      // Another scope's token (a task made in a scope that has ended), or a task with none.
      if !placed, held != nil || onATask { return false }
      if state.tickets.count >= maximumTickets { state.tickets.removeFirst() }
      state.tickets.append(Ticket(request: request, token: owner.token, placed: placed))
      return true
    }
  }

  /// The mock that answers `request`, which ``admits(_:)`` took, and the context its reports go
  /// to; `nil` when the turn it was taken for has ended. A request the gate could not place is
  /// noted for the scope's warning.
  static func admission(for request: URLRequest) -> (
    mock: URLSessionMock, relay: TestContextRelay?
  )? {
    state.withLock { state in
      // The active turn's ticket first: an equal request of an ended turn may still wait.
      let active = state.owner?.token
      let index =
        state.tickets.firstIndex { $0.token == active && $0.request == request }
        ?? state.tickets.firstIndex { $0.request == request }
      let ticket = index.map { state.tickets.remove(at: $0) }
      guard var owner = state.owner, let last = owner.levels.indices.last else { return nil }
      // Taken for a turn that has ended: it must not reach the mock of the next one.
      if let ticket, ticket.token != owner.token { return nil }
      // No ticket (URL loading started a request it asked about elsewhere, or long ago): the
      // active scope answers it, as one it cannot place.
      if ticket?.placed != true {
        owner.levels[last].unplaced.note(request)
        state.owner = owner
      }
      return (owner.levels[last].mock, owner.relay)
    }
  }

  // MARK: Installing and probing

  static let probeHeader = "X-HTTPSessionMocks-Dispatcher"
  private static let probePath = "/.well-known/httpsessionmocks-dispatcher-probe"

  /// A request only the dispatcher answers; anything else refuses it (port 9 on loopback is
  /// closed), so it never reaches the network.
  private static var probeRequest: URLRequest? {
    guard let url = URL(string: "http://127.0.0.1:9" + probePath) else { return nil }
    return URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
  }

  static func isProbe(_ request: URLRequest) -> Bool {
    guard let url = request.url else { return false }
    return url.path == probePath && url.host == "127.0.0.1" && url.port == 9
  }

  /// Registers the dispatcher, once per process, ahead of Foundation's own HTTP protocol, and
  /// has `URLSession.shared` take its copy of the registered classes now, with it.
  static func install() {
    installed.withLock { installed in
      guard !installed else { return }
      installed = true
      #if canImport(FoundationNetworking)
        // Corelibs consults registered classes in the order they were registered, and
        // registers its own (HTTP first) when the first URLSession is made: move those after
        // the dispatcher, or HTTP would claim every http(s) request first. A session made
        // first has that registration done now, so that it cannot land between the moves
        // below when another thread makes the process's first session at the same moment.
        URLSession(configuration: .ephemeral).finishTasksAndInvalidate()
        let native = URLSessionConfiguration.default.protocolClasses ?? []
        for protocolClass in native { URLProtocol.unregisterClass(protocolClass) }
        _ = URLProtocol.registerClass(SharedSessionDispatcher.self)
        for protocolClass in native { _ = URLProtocol.registerClass(protocolClass) }
      #else
        _ = URLProtocol.registerClass(SharedSessionDispatcher.self)
      #endif
      _ = URLSession.shared
    }
  }

  /// Whether `URLSession.shared` routes through the dispatcher: asked once, by a probe request.
  static func sharedSessionRoutes() async -> Bool {
    if let forced = forcedProbeResult { return forced }
    if let known = state.withLock({ $0.routes }) { return known }
    install()
    guard let probe = probeRequest else { return false }
    let routes = await withCheckedContinuation { continuation in
      URLSession.shared.dataTask(with: probe) { _, response, _ in
        continuation.resume(returning: answeredByDispatcher(response))
      }.resume()
    }
    state.withLock { $0.routes = routes }
    return routes
  }

  /// ``sharedSessionRoutes()``, blocking the calling thread while the probe runs.
  static func sharedSessionRoutesBlocking() -> Bool {
    if let forced = forcedProbeResult { return forced }
    if let known = state.withLock({ $0.routes }) { return known }
    install()
    guard let probe = probeRequest else { return false }
    let answer = Locked(false)
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: probe) { _, response, _ in
      answer.withLock { $0 = answeredByDispatcher(response) }
      done.signal()
    }.resume()
    done.wait()
    let routes = answer.withLock { $0 }
    state.withLock { $0.routes = routes }
    return routes
  }

  /// What the probe is taken to have found, inside ``withProbeResult(_:_:)``.
  @TaskLocal private static var forcedProbeResult: Bool?

  /// Runs `body` as if the probe had found that `URLSession.shared` does (or does not) route
  /// through the dispatcher (for the package's tests of the failure, which a test process that
  /// installed the dispatcher in time cannot otherwise reach). Task-local: the scopes of other
  /// tests running at the same time still see what the probe really found.
  package static func withProbeResult<Result>(
    _ routes: Bool, _ body: () async throws -> Result
  ) async rethrows -> Result {
    try await $forcedProbeResult.withValue(routes) { try await body() }
  }

  private static func answeredByDispatcher(_ response: URLResponse?) -> Bool {
    (response as? HTTPURLResponse)?.value(forHTTPHeaderField: probeHeader) != nil
  }

  // MARK: Taking turns

  /// Enters a scope for `mock` inside the one the current task holds, if it holds one; returns
  /// that scope's token, or `nil` if the task holds none.
  private static func enterNested(_ mock: URLSessionMock) -> Int? {
    guard let held = heldToken else { return nil }
    return state.withLock { state -> Int? in
      guard var owner = state.owner, owner.token == held else { return nil }
      owner.levels.append(Level(mock: mock))
      state.owner = owner
      return held
    }
  }

  private static func takeToken() -> Int {
    state.withLock { state in
      defer { state.nextToken += 1 }
      return state.nextToken
    }
  }

  /// The test context of a scope that begins a turn, captured on its own task. On a thread of
  /// its own, so that a report still gets through while the scope's test blocks its thread (the
  /// synchronous form waiting for a completion handler).
  private static func captureContext() -> TestContextRelay? {
    TestContextRelay.captureIfInTest(onThreadOfItsOwn: true)
  }

  /// Makes `mock` the one that answers, once it is this scope's turn; returns the token that
  /// leaves the scope.
  static func enter(_ mock: URLSessionMock) async -> Int {
    if let nested = enterNested(mock) { return nested }
    let token = takeToken()
    let relay = captureContext()
    await withCheckedContinuation { continuation in
      let (now, observers) = state.withLock { state -> (Bool, [RealTimeWait.Continuation]) in
        guard state.owner != nil else {
          state.owner = Owner(token: token, relay: relay, levels: [Level(mock: mock)])
          return (true, [])
        }
        state.queue.append((token, mock, relay, .suspended(continuation)))
        return (false, state.satisfiedObservers())
      }
      if now { continuation.resume() }
      for observer in observers { observer.resume() }
    }
    return token
  }

  /// ``enter(_:)``, blocking the calling thread until it is this scope's turn.
  static func enterBlocking(_ mock: URLSessionMock) -> Int {
    if let nested = enterNested(mock) { return nested }
    let token = takeToken()
    let relay = captureContext()
    let turn = DispatchSemaphore(value: 0)
    let (now, observers) = state.withLock { state -> (Bool, [RealTimeWait.Continuation]) in
      guard state.owner != nil else {
        state.owner = Owner(token: token, relay: relay, levels: [Level(mock: mock)])
        return (true, [])
      }
      state.queue.append((token, mock, relay, .blocked(turn)))
      return (false, state.satisfiedObservers())
    }
    for observer in observers { observer.resume() }
    if !now { turn.wait() }
    return token
  }

  /// Leaves the innermost scope of the turn `token`; when that was the outermost, hands the
  /// turn to the next scope waiting, if any. Returns the requests the scope answered without
  /// being able to tell where they came from.
  static func leave(_ token: Int) -> Unplaced {
    let (left, ended, next) = state.withLock {
      state -> (Level?, TestContextRelay?, Waiter?) in
      guard var owner = state.owner, owner.token == token else { return (nil, nil, nil) }
      let left = owner.levels.popLast()
      guard owner.levels.isEmpty else {
        state.owner = owner
        return (left, nil, nil)
      }
      guard !state.queue.isEmpty else {
        state.owner = nil
        return (left, owner.relay, nil)
      }
      let first = state.queue.removeFirst()
      state.owner = Owner(token: first.token, relay: first.relay, levels: [Level(mock: first.mock)])
      return (left, owner.relay, first.waiter)
    }
    // Ended and released here, outside the lock: a mock's stubs may hold closures of the test.
    ended?.close()
    let unplaced = left?.unplaced ?? Unplaced()
    withExtendedLifetime(left) {}
    next?.wake()
    return unplaced
  }

  /// Suspends until at least `count` scopes wait for their turn (for the package's tests, which
  /// check that scopes take turns without sleeping). Returns early, after `timeout` of real time
  /// or when the calling task is cancelled, so that a test whose scopes never queue up fails on
  /// its expectations instead of holding its process.
  package static func waitUntilWaiting(_ count: Int, timeout: Duration = .seconds(60)) async {
    try? await RealTimeWait.run(
      timeout: timeout,
      register: { id, continuation in
        state.withLock { state in
          guard state.queue.count < count else { return true }
          state.observers.append((id, count, continuation))
          return false
        }
      },
      unregister: { id in
        state.withLock { state in
          guard let index = state.observers.firstIndex(where: { $0.id == id }) else { return nil }
          return state.observers.remove(at: index).continuation
        }
      },
      timedOut: { CancellationError() })
  }
}
