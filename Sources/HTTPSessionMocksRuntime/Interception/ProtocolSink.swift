import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The URLProtocol bridge's sink: writes what the mock answers to the protocol's
/// `URLProtocolClient`, as a server's answer would arrive: `didReceive` the response (never
/// cached), `didLoad` the body, then `urlProtocolDidFinishLoading` or `didFailWithError`.
///
/// Body pieces (a ``StubResponse/dribbled(inChunks:over:)`` body) go to the client as they come
/// on Apple platforms, so a data delegate sees each one arrive as the test advances the clock.
/// On Linux they are collected and handed over once, at the end: swift-corelibs-foundation's
/// client keeps only the last `didLoad` piece for completion-handler and async tasks (each call
/// overwrites the body it hands them), so one piece is the only way such a task gets the whole
/// body. Either way a one-piece body is one `didLoad`.
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
    #if canImport(FoundationNetworking)
      /// The body pieces received so far (Linux: handed over at the end, in one piece).
      var pieces: Data?
    #endif
  }

  private let state: Locked<State>
  /// The request as URL loading gave it, to work out the follow-up of a redirect.
  private let request: URLRequest

  package init(protocol urlProtocol: URLProtocol, request: URLRequest) {
    self.request = request
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
    #if !canImport(FoundationNetworking)
      if let next = redirect(for: response) {
        guard let (urlProtocol, client) = takeTarget() else { return }
        return deliverRedirect(to: next, response, urlProtocol, client)
      }
    #endif
    guard let (urlProtocol, client) = state.withLock({ $0.target }) else { return }
    client.urlProtocol(urlProtocol, didReceive: response, cacheStoragePolicy: .notAllowed)
  }

  package func receive(_ body: Data) {
    #if canImport(FoundationNetworking)
      state.withLock { state in
        guard state.target != nil else { return }
        if state.pieces == nil { state.pieces = body } else { state.pieces?.append(body) }
      }
    #else
      guard let (urlProtocol, client) = state.withLock({ $0.target }) else { return }
      client.urlProtocol(urlProtocol, didLoad: body)
    #endif
  }

  package func finish(_ end: ExchangeEnd) {
    #if canImport(FoundationNetworking)
      let taken = state.withLock { state -> (State.Target, Data?)? in
        guard let target = state.target else { return nil }
        state.target = nil
        defer { state.pieces = nil }
        return (target, state.pieces)
      }
      guard let (target, body) = taken else { return }
      if let body, !body.isEmpty { target.client.urlProtocol(target.urlProtocol, didLoad: body) }
    #else
      guard let target = takeTarget() else { return }
    #endif
    Self.end(end, target.urlProtocol, target.client)
  }

  /// The whole answer in one critical region: the response, the body in one piece, the end.
  package func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd) {
    guard let (urlProtocol, client) = takeTarget() else { return }
    if let response {
      #if !canImport(FoundationNetworking)
        if let next = redirect(for: response) {
          return deliverRedirect(to: next, response, urlProtocol, client)
        }
      #endif
      client.urlProtocol(urlProtocol, didReceive: response, cacheStoragePolicy: .notAllowed)
    }
    if let body, !body.isEmpty { client.urlProtocol(urlProtocol, didLoad: body) }
    Self.end(end, urlProtocol, client)
  }

  // MARK: Helpers

  private func takeTarget() -> State.Target? {
    state.withLock { state in
      defer { state.target = nil }
      return state.target
    }
  }

  private static func end(
    _ end: ExchangeEnd, _ urlProtocol: URLProtocol, _ client: any URLProtocolClient
  ) {
    switch end {
    case .complete: client.urlProtocolDidFinishLoading(urlProtocol)
    case .failed(let error): client.urlProtocol(urlProtocol, didFailWithError: error)
    case .unmatched(let unmatched):
      client.urlProtocol(urlProtocol, didFailWithError: unmatched.error)
    case .upgraded(let conversation):
      client.urlProtocol(urlProtocol, didFailWithError: conversation.refuse())
    }
  }

  #if !canImport(FoundationNetworking)
    /// The follow-up request of a redirect, which URL loading follows itself on Apple platforms
    /// (asking the session's delegate), as it does for a server's.
    private func redirect(for response: URLResponse) -> URLRequest? {
      Redirect.request(following: Answer(data: nil, response: response, error: nil), to: request)
    }

    /// Hands a redirect to URL loading, which loads the follow-up request through a new
    /// protocol instance (so the mock records it as a request of its own), and ends this load
    /// as Apple's CustomHTTPProtocol sample does.
    private func deliverRedirect(
      to next: URLRequest, _ response: URLResponse, _ urlProtocol: URLProtocol,
      _ client: any URLProtocolClient
    ) {
      client.urlProtocol(urlProtocol, wasRedirectedTo: next, redirectResponse: response)
      client.urlProtocol(urlProtocol, didFailWithError: CocoaError(.userCancelled))
    }
  #endif
}
