import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A server-sent-events client written the way real ones are (launchdarkly's
/// swift-eventsource, Recouse's EventSource): a `URLSession` with a data delegate reads
/// `text/event-stream` piece by piece, splits lines itself, dispatches an event at each blank
/// line, remembers the last `id:` and, when the stream ends or drops, connects again sending
/// `Last-Event-ID`. It parses on its own (not with the package's parser), so that it checks the
/// bytes the doors send rather than agreeing with the mock's own reading of them.
///
/// `makeSession` builds the session from the client's delegate: `mock.makeURLSession(delegate:)`
/// for the URLProtocol bridge, a plain `URLSession(configuration:delegate:delegateQueue:)` for
/// the loopback server. It reconnects at once (a test's `retry:` would be real time) and at
/// most `maximumConnections` times in all.
public final class EventSourceClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // @unchecked Sendable: every mutable field is behind `lock`; URL loading calls the delegate
  // on the session's serial queue.

  /// An event as the client dispatched it.
  public struct Event: Equatable, Sendable {
    /// The last `id:` seen when the event was dispatched.
    public var id: String?
    /// The `event:` field, `message` when there was none.
    public var type: String
    /// The `data:` lines, joined with newlines.
    public var data: String
  }

  private struct State {
    var session: URLSession?
    var buffer: [UInt8] = []
    var data: [String] = []
    var type = ""
    var lastEventID: String?
    var events: [Event] = []
    var requests: [URLRequest] = []
    var ends: [(any Error)?] = []
    var waiters: [(id: Int, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    var nextWaiter = 0
    var closed = false

    /// Whether no more events can come: closed, or every connection made has ended (one that
    /// ends is replaced, in the same step, while the client has connections left).
    var finished: Bool { closed || !requests.isEmpty && ends.count == requests.count }

    /// The waiters that `events` now satisfies (or all of them, once no more can come), taken
    /// out.
    mutating func readyWaiters() -> [CheckedContinuation<Void, Never>] {
      let done = finished
      let met = waiters.filter { done || $0.count <= events.count }
      waiters.removeAll { done || $0.count <= events.count }
      return met.map(\.continuation)
    }

    /// The request of the next connection to `url`, if the client is open and has made fewer
    /// than `maximum`: recorded, with the parser's state reset for it.
    mutating func nextRequest(to url: URL, maximum: Int) -> URLRequest? {
      guard !closed, requests.count < maximum else { return nil }
      var request = URLRequest(url: url)
      request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
      request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
      if let lastEventID { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
      requests.append(request)
      buffer = []
      data = []
      type = ""
      return request
    }
  }

  private let lock = NSLock()
  private var state = State()
  private let url: URL
  private let maximumConnections: Int

  /// A client for `url` that connects at most `maximumConnections` times.
  public init(url: URL, maximumConnections: Int = 3) {
    self.url = url
    self.maximumConnections = maximumConnections
  }

  /// Starts reading, on a session that `makeSession` makes with this client as its delegate.
  public func start(_ makeSession: (any URLSessionDataDelegate) -> URLSession) {
    let session = makeSession(self)
    lock.withLock { state.session = session }
    connect()
  }

  /// Stops reading and invalidates the session.
  ///
  /// Its tasks are cancelled one by one rather than with `invalidateAndCancel()`, which on Linux
  /// makes `URLSession.shared` as a side effect (it checks whether it is being called on the
  /// shared session): the process's shared session must be left for the interception tests,
  /// which install their dispatcher before it is made.
  public func close() {
    let (session, waiting) = lock.withLock {
      () -> (URLSession?, [CheckedContinuation<Void, Never>]) in
      state.closed = true
      return (state.session, state.readyWaiters())
    }
    for continuation in waiting { continuation.resume() }
    session?.getAllTasks { tasks in
      for task in tasks { task.cancel() }
    }
    session?.finishTasksAndInvalidate()
  }

  /// The events dispatched so far, over every connection.
  public var events: [Event] { lock.withLock { state.events } }
  /// The requests the client sent, one per connection.
  public var requests: [URLRequest] { lock.withLock { state.requests } }
  /// How each connection ended: `nil` for a clean end, else the error.
  public var ends: [(any Error)?] { lock.withLock { state.ends } }

  /// Waits until the client has dispatched `count` events; returns early, with fewer, when no
  /// more can come (the client was closed, or its last connection ended) or the calling task is
  /// cancelled (a test's time limit), so that a test whose stream went wrong fails on its
  /// expectations instead of holding the test process.
  public func waitForEvents(count: Int) async {
    let id = lock.withLock { () -> Int in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let ready = lock.withLock { () -> Bool in
          guard state.events.count < count, !state.finished, !Task.isCancelled else { return true }
          state.waiters.append((id, count, continuation))
          return false
        }
        if ready { continuation.resume() }
      }
    } onCancel: {
      let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return state.waiters.remove(at: index).continuation
      }
      waiter?.resume()
    }
  }

  private func connect() {
    let (session, request) = lock.withLock {
      (state.session, state.nextRequest(to: url, maximum: maximumConnections))
    }
    if let session, let request { session.dataTask(with: request).resume() }
  }

  /// A piece of the stream: its complete lines are read now.
  public func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data
  ) {
    let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
      state.buffer.append(contentsOf: data)
      while let newline = state.buffer.firstIndex(where: { $0 == 10 || $0 == 13 }) {
        var line = Array(state.buffer[..<newline])
        var end = newline + 1
        if state.buffer[newline] == 13, end < state.buffer.count, state.buffer[end] == 10 {
          end += 1
        }
        state.buffer.removeFirst(end)
        if line.last == 13 { line.removeLast() }
        process(String(decoding: line, as: UTF8.self))
      }
      return state.readyWaiters()
    }
    for continuation in ready { continuation.resume() }
  }

  /// One line of the stream, as the WHATWG's event-stream interpretation reads it.
  private func process(_ line: String) {
    if line.isEmpty {
      if !state.data.isEmpty {
        state.events.append(
          Event(
            id: state.lastEventID, type: state.type.isEmpty ? "message" : state.type,
            data: state.data.joined(separator: "\n")))
      }
      state.data = []
      state.type = ""
      return
    }
    if line.hasPrefix(":") { return }
    let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    let field = String(parts[0])
    var value = parts.count > 1 ? String(parts[1]) : ""
    if value.hasPrefix(" ") { value.removeFirst() }
    switch field {
    case "data": state.data.append(value)
    case "event": state.type = value
    case "id" where !value.contains("\0"): state.lastEventID = value
    default: break
    }
  }

  /// The connection ended (cleanly or not): the client connects again.
  public func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    // The end and the next connection in one step, so that a waiter never sees the client
    // between connections as one that has finished.
    let (session, request, ready) = lock.withLock {
      () -> (URLSession?, URLRequest?, [CheckedContinuation<Void, Never>]) in
      state.ends.append(error)
      let request = state.nextRequest(to: url, maximum: maximumConnections)
      return (state.session, request, state.readyWaiters())
    }
    for continuation in ready { continuation.resume() }
    if let session, let request { session.dataTask(with: request).resume() }
  }
}
