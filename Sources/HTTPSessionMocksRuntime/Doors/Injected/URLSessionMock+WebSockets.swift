import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSessionMock {
  /// Creates a suspended WebSocket task for `request`; when resumed, the mock answers its
  /// upgrade from the stubs, and a stub's script (``StubResponse/webSocket(subprotocol:_:)``)
  /// talks to it.
  ///
  /// ```swift
  /// // Production code
  /// let socket = session.webSocket(with: URLRequest(url: chatURL))
  /// socket.resume()
  /// let greeting = try await socket.receive()
  ///
  /// // The test
  /// mock.stub(.get("/chat"), with: .webSocket([.send(.string("welcome"))]))
  /// ```
  ///
  /// The task behaves as `URLSessionWebSocketTask` does: `receive()` suspends until the
  /// script sends a message and throws once the connection is closed, with `closeCode` and
  /// `closeReason` set; `send(_:)` after the close throws; a task never resumed sends nothing.
  /// A stub that answers with a status (`.status(403)`) refuses the upgrade, and the task's
  /// `receive()` throws `URLError(.badServerResponse)`; an unmatched upgrade is reported as
  /// any unmatched request is. Unlike URLSession's, `receive()` also ends when the calling
  /// Swift task is cancelled, and a `receive()`, `send(_:)` or ping that waits on a task never
  /// resumed fails after 5 s of real time with `URLError(.timedOut)` and a report that says to
  /// call `resume()`. The journal records the upgrade as an exchange with status 101, and every
  /// message both ways (``webSocketMessages(for:)``).
  public func webSocket(with request: URLRequest) -> any HTTPWebSocketTask {
    MockWebSocketTask(request: request, core: journal.core)
  }

  /// Sets how long a call may wait on a WebSocket task never resumed (`nil`: forever) and the
  /// clock that measures that real time, for the tasks made from now on: for tests of the
  /// watchdog, which move a `VirtualClock` instead of waiting.
  package func watchForgottenResumes<C: Clock>(after timeout: Duration?, realTime: C)
  where C.Duration == Duration {
    let watchdog = ResumeWatchdog(timeout: timeout, realTime: StallWatchdog.TimeSource(realTime))
    journal.core.withLock { $0.resumeWatchdog = watchdog }
  }

  /// The messages of the WebSocket connections whose upgrade request `matcher` accepts, both
  /// ways, in the order of the connections and then of the messages.
  ///
  /// ```swift
  /// let sent = mock.webSocketMessages(for: .get("/chat")).filter { $0.direction == .fromClient }
  /// #expect(sent.count == 1)
  /// ```
  ///
  /// Each door records them: the injected mock's WebSocket tasks and the loopback server's
  /// upgraded connections alike. The close of each connection is in
  /// ``webSocketCloses(for:)``.
  public func webSocketMessages(for matcher: RequestMatcher) -> [WebSocketMessageRecord] {
    webSocketConversations(for: matcher).flatMap(\.messages)
  }

  /// How the WebSocket connections whose upgrade request `matcher` accepts were closed: the
  /// script's close, a close for an unexpected message (1008), the client's
  /// `cancel(with:reason:)`, and each side's echo of the other's close.
  public func webSocketCloses(for matcher: RequestMatcher) -> [WebSocketCloseRecord] {
    webSocketConversations(for: matcher).flatMap(\.closes)
  }

  private func webSocketConversations(for matcher: RequestMatcher) -> [WebSocketConversation] {
    // Matched outside the core's lock: a matcher may be the test's code.
    exchanges.compactMap { exchange in
      guard let conversation = exchange.webSocketConversation,
        matcher.matches(exchange.request)
      else { return nil }
      return conversation
    }
  }
}
