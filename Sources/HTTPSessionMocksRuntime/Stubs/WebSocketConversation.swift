import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The side of a WebSocket that a door holds: what a stub's script does to the client.
///
/// The injected mock's WebSocket task and the loopback server's upgraded connection each
/// implement it. The conversation calls it outside every lock, one call at a time, in the
/// script's order; after ``close(_:reason:)`` or ``drop()`` nothing more comes.
package protocol WebSocketPeer: AnyObject, Sendable {
  /// Sends `message` to the client.
  func deliver(_ message: URLSessionWebSocketTask.Message)
  /// Sends the client a ping.
  func ping()
  /// Closes the connection with a close frame of `code` and `reason`.
  func close(_ code: URLSessionWebSocketTask.CloseCode, reason: Data?)
  /// Breaks the connection without a close frame.
  func drop()
}

/// One stubbed WebSocket connection: runs a stub's script against a door's peer, on the mock's
/// clock, and records every message both ways.
///
/// The core makes one when a stub's ``StubResponse/webSocket(subprotocol:_:)`` answers a
/// WebSocket request, and hands it to the door in `ExchangeEnd.upgraded`; the exchange in the
/// journal keeps it, so the messages are read from there. The door calls ``start(with:)`` once
/// the client has the handshake, then reports what the client does (``clientSent(_:)``,
/// ``clientClosed(_:reason:)``, ``connectionLost()``), from any thread.
///
/// The script runs on whichever thread gives it something to do (a client's message, the
/// clock reaching a wait), one step at a time: an event that comes while another thread runs
/// the script is queued, and that thread takes it up before it stops.
///
/// A `wait` right after a `send` is put on the clock before the message goes to the peer, so
/// a test that has seen the message knows the wait is pending and can advance the clock; on
/// the loopback server the message is written by another thread, and without this order the
/// test could advance the clock before the script reached its wait.
package final class WebSocketConversation: Sendable {
  /// The subprotocol the stub speaks, which the handshake names when the client offers it.
  package let subprotocol: String?
  private let steps: [WebSocketStep]
  private let scheduler: Scheduler
  private let reporter: FailureReporter
  /// Where the stub was registered: an unexpected message is reported there.
  private let site: CallSite
  /// The upgrade request, for reports.
  private let summary: String
  private let opened: Scheduler.Moment
  private let state = Locked(State())

  /// What a door bounds a conversation to (the loopback server's ``ServerLimits``); the
  /// injected mock sets none.
  package struct Bounds: Sendable {
    /// The most bytes of messages, both ways together, that the journal keeps; each message
    /// past them keeps its first bytes up to them, or none, and its full size
    /// (`ServerLimits.maxJournalBodyBytes`).
    package var recordedBytes: Int
    /// The most messages the journal keeps; later ones are counted, not kept
    /// (`ServerLimits.maxJournalExchanges`).
    package var recordedMessages: Int
    /// The most bytes of the client's messages that may wait for a `receive` step while the
    /// script does something else (waits on the clock), each message counting
    /// ``unreadOverhead`` bytes beyond its payload; one message always may. One more closes
    /// the connection with code 1009, message too big (`ServerLimits.maxWebSocketMessageBytes`).
    package var unreadBytes: Int

    /// What each waiting message counts beyond its payload, for its bookkeeping, so that empty
    /// messages are bounded too.
    package static let unreadOverhead = 64

    package init(recordedBytes: Int, recordedMessages: Int, unreadBytes: Int) {
      self.recordedBytes = max(recordedBytes, 0)
      self.recordedMessages = max(recordedMessages, 0)
      self.unreadBytes = max(unreadBytes, 0)
    }
  }

  private struct State {
    var peer: (any WebSocketPeer)?
    /// The next step to run.
    var next = 0
    /// The client's messages that no `receive` step has taken yet.
    var inbox = FIFO<WebSocketPayload>()
    /// Whether a thread is running the script.
    var running = false
    /// Whether the script waits for the clock, and how to stop the wait.
    var waiting = false
    var pendingWait: PendingCancel?
    /// Whether the connection is over: closed by either side, or broken.
    var ended = false
    var messages: [WebSocketMessageRecord] = []
    var closes: [WebSocketCloseRecord] = []
    var bounds: Bounds?
    /// The payload bytes the records keep.
    var recordedBytes = 0
    /// The messages not recorded, past ``Bounds/recordedMessages``.
    var droppedMessages = 0
    /// The bytes of the messages in `inbox`.
    var unreadBytes = 0
    /// The index of the script's last `receive` step, or -1: after it, nothing reads the
    /// client's messages, and they are recorded but not kept for reading. Found when the
    /// client first sends, not for a script that only sends (a scan of the whole script).
    var lastReceive: Int?

    /// Records `payload`, within the bounds. Inlined into each step: the injected mock's
    /// conversations have no bounds, and their messages are appended as they are.
    @inline(__always)
    mutating func record(
      _ payload: WebSocketPayload, _ direction: WebSocketMessageRecord.Direction, at time: Duration
    ) {
      guard let bounds else {
        return messages.append(WebSocketMessageRecord(payload, direction, at: time))
      }
      record(payload, direction, at: time, within: bounds)
    }

    /// Records `payload` within `bounds`: past the most messages it is counted, not kept, and
    /// past the most bytes it keeps its first bytes and its full size.
    private mutating func record(
      _ payload: WebSocketPayload, _ direction: WebSocketMessageRecord.Direction,
      at time: Duration, within bounds: Bounds
    ) {
      guard messages.count < bounds.recordedMessages else {
        droppedMessages += 1
        return
      }
      let byteCount = payload.byteCount
      let room = max(bounds.recordedBytes - recordedBytes, 0)
      guard byteCount > room else {
        recordedBytes += byteCount
        return messages.append(WebSocketMessageRecord(payload, direction, at: time))
      }
      let kept = payload.prefix(room)
      recordedBytes += kept.byteCount
      messages.append(WebSocketMessageRecord(kept, direction, at: time, byteCount: byteCount))
    }
  }

  /// What a message from the client led to.
  private enum Arrival {
    case ignored
    case queued
    /// The unread messages are over the bounds: the connection closes with 1009.
    case overflow(any WebSocketPeer, Data, PendingCancel?)
  }

  /// What the script does next, worked out under the lock and done outside it.
  private enum Action {
    /// Sends a message; with `thenWait`, the wait that follows it is scheduled first.
    case deliver(any WebSocketPeer, URLSessionWebSocketTask.Message, thenWait: Duration?)
    case ping(any WebSocketPeer)
    case close(any WebSocketPeer, URLSessionWebSocketTask.CloseCode, Data?)
    case drop(any WebSocketPeer)
    case wait(Duration)
    case mismatch(any WebSocketPeer, expected: WebSocketPayload, got: WebSocketPayload)
  }

  init(
    subprotocol: String?, steps: [WebSocketStep], scheduler: Scheduler,
    reporter: FailureReporter, site: CallSite, summary: String
  ) {
    self.subprotocol = subprotocol
    self.steps = steps
    self.scheduler = scheduler
    self.reporter = reporter
    self.site = site
    self.summary = summary
    self.opened = scheduler.now()
  }

  /// Bounds what the conversation keeps; a door calls it before ``start(with:)``.
  package func bound(_ bounds: Bounds) {
    state.withLock { $0.bounds = bounds }
  }

  /// How many messages the bounds kept out of ``messages``.
  var droppedMessageCount: Int { state.withLock { $0.droppedMessages } }

  /// Every message so far, both ways, in the order they were sent.
  var messages: [WebSocketMessageRecord] { state.withLock { $0.messages } }

  /// The closes so far: at most one from each side.
  var closes: [WebSocketCloseRecord] { state.withLock { $0.closes } }

  /// The index of the script's last `receive` step, or -1 (see `State.lastReceive`).
  private func lastReceive(_ state: inout State) -> Int {
    if let index = state.lastReceive { return index }
    let index =
      steps.lastIndex {
        if case .receive = $0.kind { return true }
        return false
      } ?? -1
    state.lastReceive = index
    return index
  }

  private var time: Duration { Scheduler.time(from: opened, to: scheduler.now()) }

  // MARK: - What the door reports

  /// The client has the handshake: the script starts, talking to `peer`.
  package func start(with peer: any WebSocketPeer) {
    let starts = state.withLock { state -> Bool in
      guard state.peer == nil, !state.ended else { return false }
      state.peer = peer
      // The journal keeps about a message a step: room for them at once, not by doubling
      // (copying 20,000 records as the array grew was about 80 instructions a message in the
      // `websocket-messages` benchmark).
      state.messages.reserveCapacity(min(steps.count, state.bounds?.recordedMessages ?? .max))
      return true
    }
    if starts { run() }
  }

  /// The client sent `message`.
  package func clientSent(_ message: URLSessionWebSocketTask.Message) {
    let payload = WebSocketPayload(message)
    let now = time
    let arrival = state.withLock { state -> Arrival in
      guard !state.ended else { return .ignored }
      state.record(payload, .fromClient, at: now)
      // Kept for reading only while a `receive` step is still to come.
      guard state.next <= lastReceive(&state) else { return .ignored }
      let cost = payload.byteCount + Bounds.unreadOverhead
      if let bounds = state.bounds, !state.inbox.isEmpty,
        state.unreadBytes + cost > bounds.unreadBytes, let peer = state.peer
      {
        let reason = Data(
          "more than \(bounds.unreadBytes) bytes of messages wait for the script".utf8)
        state.closes.append(
          WebSocketCloseRecord(.fromServer, code: .messageTooBig, reason: reason, at: now))
        return .overflow(peer, reason, end(&state))
      }
      state.inbox.append(payload)
      state.unreadBytes += cost
      return .queued
    }
    switch arrival {
    case .ignored: break
    case .queued: run()
    case .overflow(let peer, let reason, let wait):
      wait?.run()
      peer.close(.messageTooBig, reason: reason)
    }
  }

  /// The client closed the connection with `code` and `reason` (or echoed the server's close).
  package func clientClosed(_ code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
    let now = time
    let wait = state.withLock { state -> PendingCancel? in
      state.closes.append(WebSocketCloseRecord(.fromClient, code: code, reason: reason, at: now))
      return end(&state)
    }
    wait?.run()
  }

  /// The door closed the connection itself with `code` and `reason` (the client broke the
  /// protocol, the server stops): recorded as the server's close, and the script ends.
  package func doorClosed(_ code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
    let now = time
    let wait = state.withLock { state -> PendingCancel? in
      guard !state.ended else { return nil }
      state.closes.append(WebSocketCloseRecord(.fromServer, code: code, reason: reason, at: now))
      return end(&state)
    }
    wait?.run()
  }

  /// The connection broke, or the client went away without a close.
  package func connectionLost() {
    state.withLock { end(&$0) }?.run()
  }

  /// Marks the connection over; returns the wait to stop. The peer is let go, so that a
  /// finished connection holds no door's object.
  private func end(_ state: inout State) -> PendingCancel? {
    state.ended = true
    state.waiting = false
    state.peer = nil
    // Nothing reads the client's messages any more.
    state.inbox = FIFO()
    state.unreadBytes = 0
    defer { state.pendingWait = nil }
    return state.pendingWait
  }

  /// Ends the conversation before it starts, for a door that cannot carry a WebSocket (only a
  /// WebSocket task is answered with one, so this is a defence, not a path); returns the error
  /// that door's client gets.
  package func refuse() -> URLError {
    connectionLost()
    return URLError(
      .unsupportedURL,
      userInfo: [NSLocalizedDescriptionKey: "this task cannot carry the WebSocket of \(summary)"])
  }

  // MARK: - Running the script

  /// Runs steps until the script waits (for the client or the clock), ends, or another thread
  /// is running it.
  private func run() {
    let claimed = state.withLock { state -> Bool in
      guard !state.running else { return false }
      state.running = true
      return true
    }
    guard claimed else { return }
    while let action = state.withLock({ nextAction(&$0) }) {
      perform(action)
    }
  }

  /// The next thing to do, with the state changed as if it were done; `nil` (and the script
  /// released) when there is nothing to do now.
  private func nextAction(_ state: inout State) -> Action? {
    while true {
      guard !state.ended, !state.waiting, let peer = state.peer, state.next < steps.count
      else {
        state.running = false
        return nil
      }
      let step = steps[state.next]
      switch step.kind {
      case .send(let payload):
        state.next += 1
        state.record(payload, .fromServer, at: time)
        if state.next < steps.count, case .wait(let duration) = steps[state.next].kind,
          duration > .zero
        {
          state.next += 1
          state.waiting = true
          return .deliver(peer, payload.message, thenWait: duration)
        }
        return .deliver(peer, payload.message, thenWait: nil)
      case .receive(let expected):
        guard let received = state.inbox.popFirst() else {
          state.running = false
          return nil
        }
        state.unreadBytes -= received.byteCount + Bounds.unreadOverhead
        state.next += 1
        if let expected, expected != received {
          let reason = Data("unexpected message".utf8)
          state.closes.append(
            WebSocketCloseRecord(.fromServer, code: .policyViolation, reason: reason, at: time))
          _ = end(&state)
          return .mismatch(peer, expected: expected, got: received)
        }
      case .wait(let duration):
        state.next += 1
        guard duration > .zero else { continue }
        state.waiting = true
        return .wait(duration)
      case .ping:
        state.next += 1
        return .ping(peer)
      case .close(let code, let reason):
        state.next += 1
        let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .invalid
        let data = reason.map { Data($0.utf8) }
        state.closes.append(
          WebSocketCloseRecord(.fromServer, code: closeCode, reason: data, at: time))
        _ = end(&state)
        return .close(peer, closeCode, data)
      case .drop:
        state.next += 1
        _ = end(&state)
        return .drop(peer)
      }
    }
  }

  private func perform(_ action: Action) {
    switch action {
    case .deliver(let peer, let message, thenWait: nil): peer.deliver(message)
    case .deliver(let peer, let message, thenWait: let duration?):
      wait(duration) { peer.deliver(message) }
    case .ping(let peer): peer.ping()
    case .close(let peer, let code, let reason): peer.close(code, reason: reason)
    case .drop(let peer): peer.drop()
    case .wait(let duration): wait(duration)
    case .mismatch(let peer, let expected, let received):
      let position = state.withLock { $0.next }
      reporter.fail(
        """
        The WebSocket script of \(summary) expected the client's next message to be \
        \(expected), but the client sent \(received).
          step \(position) of the script: .receive(\(expected))
        The server closed the socket with code 1008 (policy violation), so the client's next \
        receive() fails. Check what the code under test sends, or change the script's \
        .receive step (.receive(nil) takes any message).
        """, at: site)
      peer.close(.policyViolation, reason: Data("unexpected message".utf8))
    }
  }

  /// Puts the end of a `wait` step on the clock, then sends the message before it (`delivery`,
  /// when the wait follows a send); the script goes on when the clock reaches the wait.
  private func wait(_ duration: Duration, after delivery: (() -> Void)? = nil) {
    let undo = scheduler.schedule(after: duration) { [self] stalled in
      let resumes = state.withLock { state -> Bool in
        guard state.waiting else { return false }
        state.waiting = false
        state.pendingWait = nil
        return true
      }
      guard resumes else { return }
      if stalled { return stall() }
      run()
    }
    delivery?()
    guard let undo else {
      reporter.fail(
        "The WebSocket script of \(summary) waits \(duration) on a VirtualClock that no longer "
          + "exists, so nothing can ever advance it; the connection is dropped. Keep the clock "
          + "for as long as the test runs.", at: site)
      let peer = state.withLock { state -> (any WebSocketPeer)? in
        let peer = state.peer
        _ = end(&state)
        return peer
      }
      peer?.drop()
      return
    }
    let late = state.withLock { state -> Bool in
      guard state.waiting else { return true }
      state.pendingWait = undo
      return false
    }
    if late { undo.run() }
  }

  /// The stall watchdog ended a wait: nothing advanced the clock while the test waited.
  private func stall() {
    let reason = Data("nothing advanced the VirtualClock".utf8)
    let now = time
    let peer = state.withLock { state -> (any WebSocketPeer)? in
      guard !state.ended else { return nil }
      state.closes.append(
        WebSocketCloseRecord(.fromServer, code: .internalServerError, reason: reason, at: now))
      let peer = state.peer
      _ = end(&state)
      return peer
    }
    peer?.close(.internalServerError, reason: reason)
  }
}
