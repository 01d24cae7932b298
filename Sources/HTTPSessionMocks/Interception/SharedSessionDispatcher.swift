import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The protocol class that `URLSession.shared` consults for the mock of the active
/// ``URLSessionMock/interceptingSharedSession(isolation:fileID:filePath:line:column:_:)`` scope.
///
/// It is registered once per process (`URLProtocol.registerClass`) and never unregistered:
/// on Linux `URLSession.shared` copies the registered classes when it is first used, so a class
/// registered later, or unregistered later, changes nothing for it. Outside a scope it declines
/// every request (`canInit` is `false`), so URL loading goes on as if it were not there; it
/// always answers its own probe request, which tells whether `URLSession.shared` routes
/// through it at all.
final class SharedSessionDispatcher: MockURLProtocol {
  override class func canInit(with request: URLRequest) -> Bool {
    SharedSessionGate.isProbe(request) || SharedSessionGate.activeMock != nil
  }

  override func answeringMock() -> URLSessionMock? { SharedSessionGate.activeMock }

  override var missingMockReason: String {
    "the interceptingSharedSession scope ended before URLSession.shared started this request"
  }

  override func startLoading() {
    guard SharedSessionGate.isProbe(request), let url = request.url else {
      return super.startLoading()
    }
    let response = HTTPURLResponse(
      url: url, statusCode: 204, httpVersion: "HTTP/1.1",
      headerFields: [SharedSessionGate.probeHeader: "installed"])
    if let response {
      client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }
    client?.urlProtocolDidFinishLoading(self)
  }
}

/// The process-wide state of `interceptingSharedSession`: the second of the package's two
/// contained exceptions to "no global state" (the first is ``BridgeTable``).
///
/// Only one scope is active at a time in the process. A scope entered while another is active
/// waits its turn, first come first served (the async form suspends; the synchronous form
/// blocks its thread); the one that leaves hands the turn straight to the next. A scope entered
/// inside the active one, on the same task, does not wait: its mock answers until it ends, then
/// the outer one's again. ``SharedSessionDispatcher`` reads ``activeMock`` for every request
/// `URLSession.shared` makes; with no scope active it is `nil`, and the dispatcher is inert.
package enum SharedSessionGate {
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

  private struct Owner {
    let token: Int
    /// The mocks of the scope and of the scopes nested in it: the last one answers.
    var mocks: [URLSessionMock]
  }

  private struct State {
    var owner: Owner?
    var queue: [(token: Int, mock: URLSessionMock, waiter: Waiter)] = []
    var nextToken = 1
    /// Whether `URLSession.shared` routes through the dispatcher, once the probe has told.
    var routes: Bool?
    /// Tests waiting for scopes to queue up (``waitUntilWaiting(_:)``).
    var observers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// The observers that the queue's length now satisfies, taken out.
    mutating func satisfiedObservers() -> [CheckedContinuation<Void, Never>] {
      let met = observers.filter { $0.count <= queue.count }
      observers.removeAll { $0.count <= queue.count }
      return met.map(\.continuation)
    }
  }

  private static let state = Locked(State())
  /// Whether the dispatcher is registered. A lock of its own: registering takes Foundation's
  /// lock, under which Foundation calls `canInit`, which takes `state`'s; the two are never
  /// held together the other way round.
  private static let installed = Locked(false)

  /// The turn of the scope that the current task is inside, if any.
  @TaskLocal static var heldToken: Int?

  /// The mock that answers `URLSession.shared` now, if a scope is active.
  static var activeMock: URLSessionMock? { state.withLock { $0.owner?.mocks.last } }

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
        // the dispatcher, or HTTP would claim every http(s) request first.
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

  /// Runs `body` as if the probe had found that `URLSession.shared` does (or does not) route
  /// through the dispatcher, then forgets it (for the package's tests of the failure, which a
  /// test process that installed the dispatcher in time cannot otherwise reach). Only for tests
  /// that hold no scope and run alone.
  package static func withProbeResult<Result>(
    _ routes: Bool, _ body: () async throws -> Result
  ) async rethrows -> Result {
    let saved = state.withLock { state in
      defer { state.routes = routes }
      return state.routes
    }
    defer { state.withLock { $0.routes = saved } }
    return try await body()
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
      owner.mocks.append(mock)
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

  /// Makes `mock` the one that answers, once it is this scope's turn; returns the token that
  /// leaves the scope.
  static func enter(_ mock: URLSessionMock) async -> Int {
    if let nested = enterNested(mock) { return nested }
    let token = takeToken()
    await withCheckedContinuation { continuation in
      let (now, observers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
        guard state.owner != nil else {
          state.owner = Owner(token: token, mocks: [mock])
          return (true, [])
        }
        state.queue.append((token, mock, .suspended(continuation)))
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
    let turn = DispatchSemaphore(value: 0)
    let (now, observers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
      guard state.owner != nil else {
        state.owner = Owner(token: token, mocks: [mock])
        return (true, [])
      }
      state.queue.append((token, mock, .blocked(turn)))
      return (false, state.satisfiedObservers())
    }
    for observer in observers { observer.resume() }
    if !now { turn.wait() }
    return token
  }

  /// Leaves the innermost scope of the turn `token`; when that was the outermost, hands the
  /// turn to the next scope waiting, if any.
  static func leave(_ token: Int) {
    let (left, next) = state.withLock { state -> (URLSessionMock?, Waiter?) in
      guard var owner = state.owner, owner.token == token else { return (nil, nil) }
      let left = owner.mocks.popLast()
      guard owner.mocks.isEmpty else {
        state.owner = owner
        return (left, nil)
      }
      guard !state.queue.isEmpty else {
        state.owner = nil
        return (left, nil)
      }
      let first = state.queue.removeFirst()
      state.owner = Owner(token: first.token, mocks: [first.mock])
      return (left, first.waiter)
    }
    // Released here, outside the lock: a mock's stubs may hold closures of the test.
    withExtendedLifetime(left) {}
    next?.wake()
  }

  /// Suspends until at least `count` scopes wait for their turn (for the package's tests, which
  /// check that scopes take turns without sleeping).
  package static func waitUntilWaiting(_ count: Int) async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        guard state.queue.count < count else { return true }
        state.observers.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }
}
