import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The URLProtocol bridge's sink: writes what the mock answers to the protocol's
/// `URLProtocolClient`, as a server's answer would arrive: `didReceive` the response (never
/// cached), `didLoad` the body, then `urlProtocolDidFinishLoading` or `didFailWithError`.
///
/// Where platforms differ, the calls follow the ``URLLoadingTraits`` the sink is given (the
/// platform's own, unless a test gives another), in this one code path:
/// - A redirect (a 3xx with a `Location`) reaches the sink only where URL loading follows
///   redirects through the client (Apple platforms; on Linux the mock follows them itself). The
///   sink reports it first (`wasRedirectedTo`, with the follow-up request worked out as
///   URLSession would), then delivers the 3xx response, its body and the end like any other
///   answer: URL loading asks the session's delegate, and loads the follow-up through a new
///   protocol object, or hands the 3xx to the task when the delegate refuses the redirect (as
///   OHHTTPStubs does since its issue #174).
/// - Body pieces (a ``StubResponse/dribbled(inChunks:over:)`` body) go to the client as they
///   come, so a data delegate sees each one arrive as the test advances the clock; where URL
///   loading keeps only the last `didLoad` piece for completion-handler and async tasks (Linux),
///   they are held back and handed over once, at the end, the only way such a task gets the
///   whole body, unless the session is known to have a data delegate (`deliversPieces`), which
///   gets every piece as it comes there too. Either way a one-piece body is one `didLoad`, and
///   an empty body none.
///
/// Once URL loading has called `stopLoading()` (a cancel), nothing more reaches the client:
/// URL loading reports the cancel itself. No lock is held while the client runs.
package final class ProtocolSink: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: the protocol and its client (neither is Sendable) are only used to call
  // the client, outside the lock and one call after another (the core never calls a sink
  // concurrently; a door's own failure comes before the request is sent); everything that
  // changes is in `state`, behind its lock.
  private struct State {
    typealias Target = (urlProtocol: URLProtocol, client: any URLProtocolClient)
    /// Whom the answer goes to; `nil` once the exchange has ended or URL loading stopped it.
    var target: Target?
    /// The mock's task, which `stop()` cancels.
    var task: WeakReference<MockTask>?
    var stopped = false
    /// The body pieces held back for the end, where URL loading keeps only the last one.
    var pieces: Data?
  }

  private let state: Locked<State>
  /// The request as URL loading gave it, to work out the follow-up of a redirect.
  private let request: URLRequest
  private let traits: URLLoadingTraits
  /// Whether the session has a data delegate, which gets every piece as it comes: pieces are
  /// then never held back.
  private let deliversPieces: Bool

  /// A sink that answers `urlProtocol`'s client as the URL loading described by `traits` expects
  /// (the platform's own by default). With `deliversPieces` (the session has a data delegate),
  /// each body piece goes to the client as it comes on every platform.
  package init(
    protocol urlProtocol: URLProtocol, request: URLRequest,
    traits: URLLoadingTraits = .current, deliversPieces: Bool = false
  ) {
    self.request = request
    self.traits = traits
    self.deliversPieces = deliversPieces
    let target = urlProtocol.client.map { (urlProtocol, $0) }
    state = Locked(State(target: target))
  }

  /// Keeps the mock's task for `stop()`; cancels it at once if loading has already stopped.
  package func attach(_ task: MockTask) {
    let stopped = state.withLock { state -> Bool in
      state.task = WeakReference(task)
      return state.stopped
    }
    if stopped { task.cancel() }
  }

  /// URL loading's `stopLoading()`: nothing more reaches the client, and the mock's task is
  /// cancelled (the journal shows it; its pending answer is dropped).
  package func stop() {
    let task = state.withLock { state -> MockTask? in
      state.stopped = true
      state.target = nil
      return state.task?.object
    }
    task?.cancel()
  }

  /// Whether URL loading has stopped the exchange.
  package var isStopped: Bool { state.withLock { $0.stopped } }

  /// Fails the exchange before the request reached the mock (the door's own errors).
  package func fail(_ error: any Error) {
    guard let (urlProtocol, client) = takeTarget() else { return }
    client.urlProtocol(urlProtocol, didFailWithError: error)
  }

  // MARK: ResponseSink

  package func receive(_ response: URLResponse) {
    guard let target = state.withLock({ $0.target }) else { return }
    deliver(response, to: target)
  }

  package func receive(_ body: Data) {
    guard !body.isEmpty else { return }
    let target = state.withLock { state -> State.Target? in
      guard traits.keepsOnlyLastPiece, !deliversPieces, state.target != nil else {
        return state.target
      }
      if state.pieces == nil { state.pieces = body } else { state.pieces?.append(body) }
      return nil  // held back for the end
    }
    guard let (urlProtocol, client) = target else { return }
    client.urlProtocol(urlProtocol, didLoad: body)
  }

  package func finish(_ end: ExchangeEnd) {
    let taken = state.withLock { state -> (State.Target, Data?)? in
      guard let target = state.target else { return nil }
      state.target = nil
      defer { state.pieces = nil }
      return (target, state.pieces)
    }
    guard let (target, held) = taken else { return }
    if let held { target.client.urlProtocol(target.urlProtocol, didLoad: held) }
    Self.end(end, target)
  }

  /// The whole answer in one critical region: the response, the body in one piece, the end.
  package func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd) {
    guard let target = takeTarget() else { return }
    if let response { deliver(response, to: target) }
    if let body, !body.isEmpty { target.client.urlProtocol(target.urlProtocol, didLoad: body) }
    Self.end(end, target)
  }

  // MARK: Helpers

  private func takeTarget() -> State.Target? {
    state.withLock { state in
      defer { state.target = nil }
      return state.target
    }
  }

  /// Hands URL loading the response's head: a redirect first, where URL loading follows
  /// redirects through the client, then the response itself.
  private func deliver(_ response: URLResponse, to target: State.Target) {
    if traits.followsRedirectsThroughClient,
      let next = Redirect.request(
        following: Answer(data: nil, response: response, error: nil), to: request)
    {
      target.client.urlProtocol(
        target.urlProtocol, wasRedirectedTo: next, redirectResponse: response)
    }
    target.client.urlProtocol(
      target.urlProtocol, didReceive: response, cacheStoragePolicy: .notAllowed)
  }

  private static func end(_ end: ExchangeEnd, _ target: State.Target) {
    let (urlProtocol, client) = target
    switch end {
    case .complete: client.urlProtocolDidFinishLoading(urlProtocol)
    case .failed(let error): client.urlProtocol(urlProtocol, didFailWithError: error)
    case .unmatched(let unmatched):
      client.urlProtocol(urlProtocol, didFailWithError: unmatched.error)
    case .upgraded(let conversation):
      client.urlProtocol(urlProtocol, didFailWithError: conversation.refuse())
    }
  }
}
