import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension HTTPSession {
  /// Creates a WebSocket task for `url`, as ``webSocket(with:)-(URLRequest)`` does for a GET
  /// request of it.
  public func webSocket(with url: URL) -> any HTTPWebSocketTask {
    webSocket(with: URLRequest(url: url))
  }

  /// The default for a session of your own that has no WebSockets: a task that fails.
  ///
  /// Its `resume()` does nothing, and `send`, `receive` and `sendPing` fail with
  /// `URLError(.unsupportedURL)`, whose description names the session's type. `URLSession`
  /// implements ``webSocket(with:)-(URLRequest)`` itself.
  public func webSocket(with request: URLRequest) -> any HTTPWebSocketTask {
    UnsupportedWebSocketTask(request: request, sessionType: "\(type(of: self))")
  }
}

extension URLSession {
  /// Creates a WebSocket task with Foundation's `webSocketTask(with:)`.
  ///
  /// > Note: On Linux every such task fails at `resume()` (see ``HTTPWebSocketTask``).
  public func webSocket(with request: URLRequest) -> any HTTPWebSocketTask {
    webSocketTask(with: request)
  }
}

/// The task of a session without WebSockets: every operation fails, saying which session.
final class UnsupportedWebSocketTask: HTTPWebSocketTask, @unchecked Sendable {
  // @unchecked Sendable: `resumed` is only read and written with `lock` held; the rest is
  // immutable.
  private let error: URLError
  // NSLock, not the package's `Locked`: this module, the one production code links, sits below
  // the one that holds `Locked`, and a lock shared from here would be a generic call across
  // modules on every double's request path.
  private let lock = NSLock()
  private var resumed = false

  init(request: URLRequest, sessionType: String) {
    var info: [String: Any] = [
      NSLocalizedDescriptionKey:
        "\(sessionType) does not implement webSocket(with:), so it cannot open a WebSocket"
    ]
    if let url = request.url { info[NSURLErrorFailingURLErrorKey] = url }
    error = URLError(.unsupportedURL, userInfo: info)
  }

  func resume() {
    lock.lock()
    resumed = true
    lock.unlock()
  }

  func cancel() { resume() }
  func send(_ message: URLSessionWebSocketTask.Message) async throws { throw error }
  func receive() async throws -> URLSessionWebSocketTask.Message { throw error }
  func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
    pongReceiveHandler(error)
  }
  func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) { resume() }
  var closeCode: URLSessionWebSocketTask.CloseCode { .invalid }
  var closeReason: Data? { nil }
  var maximumMessageSize: Int {
    get { 1 << 20 }
    set {}
  }
  var state: URLSessionTask.State {
    lock.lock()
    defer { lock.unlock() }
    return resumed ? .completed : .suspended
  }
}
