import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The injected mock's WebSocket task: `URLSessionMock.webSocket(with:)` makes one.
///
/// It behaves as `URLSessionWebSocketTask` does. Nothing is sent before `resume()`; then the
/// upgrade request goes through the mock's core like any request (recorded, routed, answered
/// on the clock), and a stub's WebSocket script talks to it. `receive()` suspends until the
/// script sends a message, and throws once the connection is closed (with ``closeCode`` and
/// ``closeReason`` set to the server's); `send(_:)` after the close throws. Sends and pings
/// made before the handshake completes wait for it, as URLSession's do, and reach the script
/// in order before any later send; one still waiting when the connection closes fails.
///
/// Unlike URLSession's, `receive()` also ends when the calling Swift task is cancelled
/// (throwing `CancellationError`), so that a test never hangs on it; and a `receive()`, send or
/// ping that waits on a task never resumed fails after 5 s of real time with a report naming
/// the fix (see ``ResumeWatchdog``).
final class MockWebSocketTask: HTTPWebSocketTask, WebSocketPeer {
  typealias Message = URLSessionWebSocketTask.Message

  private enum Phase {
    case suspended
    case connecting
    case open(WebSocketConversation)
    case closed
  }

  private struct State {
    var phase = Phase.suspended
    /// Messages from the server that no `receive()` has taken yet.
    var inbox = FIFO<Message>()
    var receivers: [(id: UInt64, continuation: CheckedContinuation<Message, any Error>)] = []
    /// `receive()` calls whose Swift task was cancelled before they waited.
    var cancelledReceivers: Set<UInt64> = []
    var nextReceiver: UInt64 = 0
    /// Sends and pings made before the handshake completed.
    var pendingSends: [(Message, CheckedContinuation<Void, any Error>)] = []
    var pendingPings: [@Sendable ((any Error)?) -> Void] = []
    /// Whether the connection is open and the sends and pings made before are still being
    /// handed to the script: new ones wait behind them, so that none overtakes them.
    var draining = false
    /// Tests waiting for this many sends to wait (``waitForWaitingSends(count:)``).
    var sendCountWaiters: [(count: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    /// Whether the forgotten-resume watchdog runs, and its timer once stored.
    var resumeWatchdogArmed = false
    var resumeWatchdogTimer: Task<Void, Never>?
    var closeCode = URLSessionWebSocketTask.CloseCode.invalid
    var closeReason: Data?
    /// What `receive()` and `send(_:)` throw once the connection is closed.
    var failure: (any Error)?
    var maximumMessageSize = 1 << 20

    /// What `receive()` returns without waiting: a message, or the error of a closed
    /// connection; `nil` when it must wait.
    mutating func readyReceive() -> Result<Message, any Error>? {
      if let message = inbox.popFirst() { return .success(message) }
      if case .closed = phase { return .failure(failure ?? URLError(.networkConnectionLost)) }
      return nil
    }

    /// Takes out the tests' waiters that as many sends as wait now satisfy.
    mutating func takeMetSendCountWaiters() -> [CheckedContinuation<Void, any Error>] {
      guard !sendCountWaiters.isEmpty else { return [] }
      let count = pendingSends.count
      let met = sendCountWaiters.filter { $0.count <= count }.map(\.continuation)
      sendCountWaiters.removeAll { $0.count <= count }
      return met
    }
  }

  /// What the task hands out when it leaves the lock: continuations to resume and handlers
  /// to call.
  private struct Release {
    var messages: [(CheckedContinuation<Message, any Error>, Message)] = []
    var receiveFailures: [CheckedContinuation<Message, any Error>] = []
    var sends: [CheckedContinuation<Void, any Error>] = []
    var pings: [@Sendable ((any Error)?) -> Void] = []
    /// Tests waiting for sends to wait: met (`nil`) or failed with the error.
    var sendCountWaiters: [CheckedContinuation<Void, any Error>] = []
    var error: (any Error)?

    func run() {
      for (continuation, message) in messages { continuation.resume(returning: message) }
      let error = error ?? URLError(.networkConnectionLost)
      for continuation in receiveFailures { continuation.resume(throwing: error) }
      for continuation in sends { continuation.resume(throwing: error) }
      for ping in pings { ping(error) }
      for continuation in sendCountWaiters { continuation.resume(throwing: error) }
    }
  }

  private let handshake: MockTask
  private let locked = Locked(State())
  /// Read once: the watchdog for calls that wait on a task never resumed.
  private let resumeWatchdog: ResumeWatchdog

  init(request: URLRequest, core: SessionCore) {
    let sink = HandshakeSink()
    handshake = core.enter(request, kind: .webSocket, through: .injected, receiver: .sink(sink))
    resumeWatchdog = core.withLock { $0.resumeWatchdog }
    sink.owner.withLock { $0 = WeakReference(self) }
  }

  // MARK: - HTTPWebSocketTask

  func resume() {
    let (starts, timer) = locked.withLock { state -> (Bool, Task<Void, Never>?) in
      guard case .suspended = state.phase else { return (false, nil) }
      state.phase = .connecting
      state.resumeWatchdogArmed = false
      defer { state.resumeWatchdogTimer = nil }
      return (true, state.resumeWatchdogTimer)
    }
    timer?.cancel()
    if starts { handshake.resume() }
  }

  func cancel() {
    end(sendingClose: nil, error: URLError(.cancelled, for: handshake.originalRequest))
  }

  func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
    end(
      sendingClose: (closeCode, reason),
      error: URLError(.cancelled, for: handshake.originalRequest))
  }

  func send(_ message: Message) async throws {
    enum Next {
      case now(WebSocketConversation)
      case wait
      case fail(any Error)
    }
    let next = locked.withLock { state -> Next in
      switch state.phase {
      case .open(let conversation): return state.draining ? .wait : .now(conversation)
      case .suspended, .connecting: return .wait
      case .closed: return .fail(state.failure ?? URLError(.networkConnectionLost))
      }
    }
    switch next {
    case .now(let conversation): conversation.clientSent(message)
    case .fail(let error): throw error
    case .wait:
      try await withCheckedThrowingContinuation { continuation in
        typealias Outcome = Result<WebSocketConversation, any Error>
        let (outcome, met) = locked.withLock {
          state -> (Outcome?, [CheckedContinuation<Void, any Error>]) in
          switch state.phase {
          case .open(let conversation) where !state.draining: return (.success(conversation), [])
          case .closed: return (.failure(state.failure ?? URLError(.networkConnectionLost)), [])
          case .suspended, .connecting, .open:
            state.pendingSends.append((message, continuation))
            return (nil, state.takeMetSendCountWaiters())
          }
        }
        switch outcome {
        case .success(let conversation)?:
          conversation.clientSent(message)
          continuation.resume()
        case .failure(let error)?: continuation.resume(throwing: error)
        case nil:
          armResumeWatchdog()
          for waiter in met { waiter.resume() }
        }
      }
    }
  }

  func receive() async throws -> Message {
    // A message already here (or the close) is taken without suspending.
    let (ready, id) = locked.withLock { state -> (Result<Message, any Error>?, UInt64) in
      if let ready = state.readyReceive() { return (ready, 0) }
      defer { state.nextReceiver += 1 }
      return (nil, state.nextReceiver)
    }
    if let ready { return try ready.get() }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let outcome = locked.withLock { state -> Result<Message, any Error>? in
          if let ready = state.readyReceive() { return ready }
          if state.cancelledReceivers.remove(id) != nil { return .failure(CancellationError()) }
          state.receivers.append((id, continuation))
          return nil
        }
        if let outcome { return continuation.resume(with: outcome) }
        armResumeWatchdog()
      }
    } onCancel: {
      let waiting = locked.withLock { state -> CheckedContinuation<Message, any Error>? in
        guard let index = state.receivers.firstIndex(where: { $0.id == id }) else {
          state.cancelledReceivers.insert(id)
          return nil
        }
        return state.receivers.remove(at: index).continuation
      }
      waiting?.resume(throwing: CancellationError())
    }
  }

  func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
    let outcome = locked.withLock { state -> (any Error)?? in
      switch state.phase {
      case .open where !state.draining: return .some(nil)
      case .closed: return .some(state.failure ?? URLError(.networkConnectionLost))
      case .suspended, .connecting, .open:
        state.pendingPings.append(pongReceiveHandler)
        return .none
      }
    }
    // The script's server answers a ping at once, as servers do.
    guard let outcome else { return armResumeWatchdog() }
    pongReceiveHandler(outcome)
  }

  var closeCode: URLSessionWebSocketTask.CloseCode { locked.withLock { $0.closeCode } }

  /// Suspends until at least `count` sends wait for the handshake (or for those before
  /// them): for tests that need sends to be waiting before they go on. Throws once the
  /// connection has closed, or the sends stopped waiting, first.
  func waitForWaitingSends(count: Int) async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let outcome = locked.withLock { state -> Result<Void, any Error>? in
        if state.pendingSends.count >= count { return .success(()) }
        if case .closed = state.phase {
          return .failure(state.failure ?? URLError(.networkConnectionLost))
        }
        state.sendCountWaiters.append((count, continuation))
        return nil
      }
      if let outcome { continuation.resume(with: outcome) }
    }
  }

  var closeReason: Data? { locked.withLock { $0.closeReason } }

  var maximumMessageSize: Int {
    get { locked.withLock { $0.maximumMessageSize } }
    set { locked.withLock { $0.maximumMessageSize = newValue } }
  }

  var state: URLSessionTask.State {
    locked.withLock { state in
      switch state.phase {
      case .suspended: return .suspended
      case .connecting, .open: return .running
      case .closed: return .completed
      }
    }
  }

  // MARK: - WebSocketPeer: what the script does

  func deliver(_ message: Message) {
    let size = WebSocketPayload(message).byteCount
    enum Outcome {
      case handed(CheckedContinuation<Message, any Error>)
      case kept
      case tooBig(Int)
      case ignored
    }
    let outcome = locked.withLock { state -> Outcome in
      guard case .open = state.phase else { return .ignored }
      guard size <= state.maximumMessageSize else { return .tooBig(state.maximumMessageSize) }
      guard !state.receivers.isEmpty else {
        state.inbox.append(message)
        return .kept
      }
      return .handed(state.receivers.removeFirst().continuation)
    }
    switch outcome {
    case .handed(let continuation): continuation.resume(returning: message)
    case .kept, .ignored: break
    case .tooBig(let limit):
      // As URLSession does: the client closes with 1009 and the receive fails.
      let error = Self.posixError(
        EMSGSIZE,
        "Message too long: the server sent a message of \(size) bytes, over the task's "
          + "maximumMessageSize of \(limit)")
      end(sendingClose: (.messageTooBig, nil), error: error)
    }
  }

  func ping() {
    // The client answers a ping with a pong by itself; there is nothing to tell the code.
  }

  func close(_ code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
    let error = Self.posixError(
      ENOTCONN, "Socket is not connected: the server closed the WebSocket with \(code.rawValue)")
    let (release, conversation) = locked.withLock { state -> (Release?, WebSocketConversation?) in
      guard case .open(let conversation) = state.phase else { return (nil, nil) }
      state.closeCode = code
      state.closeReason = reason
      return (close(&state, error), conversation)
    }
    // The client echoes the close, as a WebSocket client does.
    conversation?.clientClosed(code, reason: reason)
    release?.run()
  }

  func drop() {
    let error = URLError(
      .networkConnectionLost, for: handshake.originalRequest,
      description: "the stub's WebSocket script dropped the connection")
    locked.withLock { state -> Release? in
      guard case .open = state.phase else { return nil }
      return close(&state, error)
    }?.run()
  }

  // MARK: - The handshake

  /// The upgrade's answer: the script's connection, or a refusal.
  fileprivate func handshakeEnded(_ response: URLResponse?, _ end: ExchangeEnd) {
    switch end {
    case .upgraded(let conversation):
      let opened = locked.withLock { state -> Bool in
        guard case .connecting = state.phase else { return false }
        state.phase = .open(conversation)
        state.draining = !state.pendingSends.isEmpty || !state.pendingPings.isEmpty
        return true
      }
      guard opened else {
        // Cancelled while the handshake was on its way.
        return conversation.connectionLost()
      }
      conversation.start(with: self)
      drain(into: conversation)
    case .complete:
      let status = (response as? HTTPURLResponse)?.statusCode
      let error = URLError(
        .badServerResponse, for: handshake.originalRequest,
        description: "the server refused the WebSocket upgrade"
          + (status.map { " with status \($0)" } ?? ""))
      self.end(sendingClose: nil, error: error)
    case .failed(let error):
      self.end(sendingClose: nil, error: error)
    case .unmatched(let unmatched):
      self.end(sendingClose: nil, error: unmatched.error)
    }
  }

  /// Hands the script the sends made before the connection opened, one at a time and in
  /// order, then answers the pings; meanwhile new sends and pings wait behind them. A send
  /// still waiting when the connection closes fails, with the close (`close(_:_:)` takes it).
  private func drain(into conversation: WebSocketConversation) {
    typealias Send = (Message, CheckedContinuation<Void, any Error>)
    typealias Ping = @Sendable ((any Error)?) -> Void
    while true {
      // The next waiting send, or (once none is left) the waiting pings; neither once the
      // connection has closed.
      let (send, pings) = locked.withLock { state -> (Send?, [Ping]?) in
        guard case .open = state.phase, state.draining else { return (nil, nil) }
        guard state.pendingSends.isEmpty else { return (state.pendingSends.removeFirst(), nil) }
        state.draining = false
        defer { state.pendingPings = [] }
        return (nil, state.pendingPings)
      }
      guard let (message, continuation) = send else {
        for ping in pings ?? [] { ping(nil) }
        return
      }
      conversation.clientSent(message)
      continuation.resume()
    }
  }

  // MARK: - Ending

  /// Ends the task from the client's side: a close frame (when one is given and the
  /// connection is open) or a break, then every waiter fails with `error`.
  private func end(
    sendingClose close: (URLSessionWebSocketTask.CloseCode, Data?)?, error: any Error
  ) {
    enum Before {
      case suspended
      case connecting
      case open(WebSocketConversation)
    }
    let (before, release) = locked.withLock { state -> (Before?, Release?) in
      let before: Before
      switch state.phase {
      case .closed: return (nil, nil)
      case .suspended: before = .suspended
      case .connecting: before = .connecting
      case .open(let conversation): before = .open(conversation)
      }
      if let close {
        state.closeCode = close.0
        state.closeReason = close.1
      }
      return (before, self.close(&state, error))
    }
    switch before {
    case .open(let conversation)?:
      if let close {
        conversation.clientClosed(close.0, reason: close.1)
      } else {
        conversation.connectionLost()
      }
    case .connecting?: handshake.cancel()
    case .suspended?, nil: break
    }
    release?.run()
  }

  /// Marks the connection closed and takes out everything waiting on it.
  private func close(_ state: inout State, _ error: any Error) -> Release {
    state.phase = .closed
    state.draining = false
    state.failure = error
    return takeEveryWaiter(&state, failingWith: error)
  }

  /// Takes out every call waiting on the task, to fail with `error` outside the lock.
  private func takeEveryWaiter(_ state: inout State, failingWith error: any Error) -> Release {
    var release = Release(error: error)
    release.receiveFailures = state.receivers.map(\.continuation)
    release.sends = state.pendingSends.map(\.1)
    release.pings = state.pendingPings
    release.sendCountWaiters = state.sendCountWaiters.map(\.continuation)
    state.receivers = []
    state.pendingSends = []
    state.pendingPings = []
    state.sendCountWaiters = []
    return release
  }

  // MARK: - The forgotten-resume watchdog

  /// Starts the watchdog when a call waits on a task that is still suspended and none runs.
  ///
  /// Its timer is an unstructured `Task` made here, in the waiting call, so it carries the
  /// test's context (under Swift Testing, the current test) to the report.
  private func armResumeWatchdog() {
    guard let timeout = resumeWatchdog.timeout else { return }
    let arms = locked.withLock { state -> Bool in
      guard case .suspended = state.phase, !state.resumeWatchdogArmed else { return false }
      state.resumeWatchdogArmed = true
      return true
    }
    guard arms else { return }
    let realTime = resumeWatchdog.realTime
    let deadline = realTime.now() + timeout
    let timer = Task { [weak self] in
      do { try await realTime.sleep(deadline) } catch { return }
      self?.resumeWatchdogFired(after: timeout)
    }
    let stale = locked.withLock { state -> Bool in
      guard state.resumeWatchdogArmed else { return true }
      state.resumeWatchdogTimer = timer
      return false
    }
    // Resumed (or fired) meanwhile: this timer has nothing left to watch.
    if stale { timer.cancel() }
  }

  /// The watchdog's limit passed: if the task is still suspended, every call waiting on it
  /// fails, after the report.
  private func resumeWatchdogFired(after timeout: Duration) {
    let request = handshake.originalRequest
    let error = URLError(
      .timedOut, for: request,
      description: "the WebSocket task was never resumed; call resume() on it")
    let fired = locked.withLock { state -> (ResumeWatchdog.Waiting, Release)? in
      state.resumeWatchdogArmed = false
      state.resumeWatchdogTimer = nil
      guard case .suspended = state.phase else { return nil }
      let waiting = ResumeWatchdog.Waiting(
        receives: state.receivers.count, sends: state.pendingSends.count,
        pings: state.pendingPings.count)
      guard !waiting.isEmpty else { return nil }
      return (waiting, takeEveryWaiter(&state, failingWith: error))
    }
    guard let (waiting, release) = fired else { return }
    let core = handshake.core
    core.reporter.fail(
      ResumeWatchdog.report(waiting, task: request.summary, after: timeout), at: core.ownerSite)
    release.run()
  }

  private static func posixError(_ code: Int32, _ description: String) -> NSError {
    NSError(
      domain: NSPOSIXErrorDomain, code: Int(code),
      userInfo: [NSLocalizedDescriptionKey: description])
  }
}

/// The handshake task's sink: it hands the upgrade's answer to the WebSocket task.
private final class HandshakeSink: ResponseSink {
  let owner = Locked<WeakReference<MockWebSocketTask>?>(nil)
  private let response = Locked<URLResponse?>(nil)

  func receive(_ response: URLResponse) { self.response.withLock { $0 = response } }
  func receive(_ body: Data) {}

  func finish(_ end: ExchangeEnd) {
    let head = response.withLock { $0 }
    guard let task = owner.withLock({ $0?.object }) else {
      if case .upgraded(let conversation) = end { conversation.connectionLost() }
      return
    }
    task.handshakeEnded(head, end)
  }
}
