import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSession {
  /// Sends a request on a session of its own, made from this session's configuration, and
  /// returns the response as soon as its head arrives, with the body as a stream of the pieces
  /// Foundation delivers.
  ///
  /// ```swift
  /// let (stream, response) = try await URLSession.shared.stream(for: URLRequest(url: eventsURL))
  /// for try await event in stream.events { handle(event) }
  /// ```
  ///
  /// The session of its own, with a data delegate that feeds the stream, is what streams on
  /// every platform: corelibs Foundation has no `bytes(for:)`, ignores a task delegate on a
  /// session made without a delegate (`URLSession.shared`), and its `data(for:delegate:)`
  /// also keeps the whole body in memory. It shares this session's configuration (headers,
  /// timeouts, cookie storage, cache, protocol classes), not its delegate, and is invalidated
  /// when the transfer ends. Redirects are followed as the configuration says. See
  /// <doc:StreamingResponses>.
  ///
  /// Pieces that the reader has not taken yet are kept in memory: read an endless stream as it
  /// comes, or leave it (leaving cancels the request).
  public func stream(for request: URLRequest) async throws -> (HTTPByteStream, URLResponse) {
    let relay = StreamRelay()
    let session = URLSession(configuration: configuration, delegate: relay, delegateQueue: nil)
    let task = session.dataTask(with: request)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        relay.start(head: continuation)
        task.resume()
      }
    } onCancel: {
      task.cancel()
    }
  }
}

/// The delegate of a ``URLSession/stream(for:)`` session: hands the head to the waiting call
/// and each piece of the body to the stream, then invalidates its session.
final class StreamRelay: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // @unchecked Sendable: `state` is only read and written with `lock` held; continuations are
  // resumed and Foundation's handlers called after the lock is released.
  private struct State {
    var head: CheckedContinuation<(HTTPByteStream, URLResponse), any Error>?
    var body: AsyncThrowingStream<Data, any Error>.Continuation?
    /// Whether ``start(head:)`` has run.
    var started = false
    /// The failure that ended the task before ``start(head:)`` ran: a call whose task was
    /// cancelled already cancels the data task at once, and Foundation may report that
    /// before the continuation is kept.
    var endedEarly: (any Error)?
  }
  // NSLock, not the package's `Locked`: this module, the one production code links, sits below
  // the one that holds `Locked`, and a lock shared from here would be a generic call across
  // modules on every double's request path.
  private let lock = NSLock()
  private var state = State()

  /// Keeps the continuation that the head, or the failure before it, resumes; resumes it at
  /// once with the failure if the task has ended already.
  func start(head: CheckedContinuation<(HTTPByteStream, URLResponse), any Error>) {
    lock.lock()
    state.started = true
    let early = state.endedEarly
    state.endedEarly = nil
    if early == nil { state.head = head }
    lock.unlock()
    if let early { head.resume(throwing: early) }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    let (chunks, body) = AsyncThrowingStream<Data, any Error>.makeStream()
    let stream = HTTPByteStream(chunks, onCancel: { [weak dataTask] in dataTask?.cancel() })
    lock.lock()
    let head = state.head
    state.head = nil
    state.body = body
    lock.unlock()
    completionHandler(.allow)
    head?.resume(returning: (stream, response))
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    lock.lock()
    let body = state.body
    lock.unlock()
    body?.yield(data)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    let failure = error ?? URLError(.badServerResponse)
    lock.lock()
    let head = state.head
    let body = state.body
    if !state.started { state.endedEarly = failure }
    state.head = nil
    state.body = nil
    lock.unlock()
    if let head {
      head.resume(throwing: failure)
    }
    body?.finish(throwing: error)
    session.finishTasksAndInvalidate()
  }
}
