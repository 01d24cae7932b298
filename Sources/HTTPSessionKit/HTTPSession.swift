import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The part of `URLSession` that API clients use, as a protocol that test doubles can adopt.
///
/// Production code depends on `any HTTPSession` instead of `URLSession`, and keeps `URLSession`
/// as the default; tests assign a double from `HTTPSessionMocks`. The requirements use
/// `URLSession`'s own spellings, so calls read exactly as they did before:
///
/// ```swift
/// lazy var session: any HTTPSession = URLSession.shared  // tests assign a URLSessionMock
/// ```
///
/// The task methods return associated types, so `URLSession` keeps handing out its own
/// `URLSessionDataTask` and friends, and `any HTTPSession` hands out `any HTTPDataTask`. As with
/// `URLSession`, a task does nothing until ``HTTPDataTask/resume()``. See <doc:GettingStarted>
/// and <doc:URLSessionConformance>.
public protocol HTTPSession: Sendable {
  /// The task that ``dataTask(with:completionHandler:)-(URLRequest,_)`` returns.
  associatedtype DataTask: HTTPDataTask
  /// The task that ``uploadTask(with:from:completionHandler:)`` returns.
  associatedtype UploadTask: HTTPDataTask
  /// The task that ``downloadTask(with:completionHandler:)`` returns.
  associatedtype DownloadTask: HTTPDataTask

  /// Creates a task that retrieves the contents of a request, then calls a handler.
  ///
  /// - Parameters:
  ///   - request: The request to send, with its method, headers and body.
  ///   - completionHandler: Called once with the body, the response and any transport error.
  /// - Returns: A suspended task; call ``HTTPDataTask/resume()`` to start it.
  func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> DataTask

  /// Creates a task that retrieves the contents of a URL with a GET request, then calls a handler.
  ///
  /// - Parameters:
  ///   - url: The URL to fetch.
  ///   - completionHandler: Called once with the body, the response and any transport error.
  /// - Returns: A suspended task; call ``HTTPDataTask/resume()`` to start it.
  func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> DataTask

  /// Creates a task that sends a body with a request, then calls a handler.
  ///
  /// - Parameters:
  ///   - request: The request to send; its own `httpBody` is ignored.
  ///   - bodyData: The body to upload.
  ///   - completionHandler: Called once with the response body, the response and any error.
  /// - Returns: A suspended task; call ``HTTPDataTask/resume()`` to start it.
  func uploadTask(
    with request: URLRequest,
    from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> UploadTask

  /// Creates a task that downloads a request's body to a temporary file, then calls a handler.
  ///
  /// - Parameters:
  ///   - request: The request to send.
  ///   - completionHandler: Called once with the file's URL, the response and any error. The
  ///     file is deleted when the handler returns: move it or read it before then.
  /// - Returns: A suspended task; call ``HTTPDataTask/resume()`` to start it.
  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> DownloadTask

  /// Sends a request and returns its body and response.
  ///
  /// Cancelling the calling Swift task cancels the request, which then throws
  /// `URLError(.cancelled)`.
  func data(for request: URLRequest) async throws -> (Data, URLResponse)

  /// Fetches a URL with a GET request and returns its body and response.
  func data(from url: URL) async throws -> (Data, URLResponse)

  /// Uploads a body with a request and returns the response body and response.
  func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse)

  /// Downloads a request's body to a file and returns the file's URL and the response.
  ///
  /// The caller owns the file and should move or delete it.
  func download(for request: URLRequest) async throws -> (URL, URLResponse)

  /// Sends a request and returns its response as soon as the head arrives, with the body as a
  /// stream of the pieces that follow.
  ///
  /// For bodies read while they arrive: server-sent events, a log or a token stream, a long
  /// download with progress.
  ///
  /// ```swift
  /// let (stream, response) = try await session.stream(for: URLRequest(url: eventsURL))
  /// for try await event in stream.events {
  ///   handle(event)
  /// }
  /// ```
  ///
  /// Leaving the loop early, or cancelling the task that reads, cancels the request. A
  /// transport failure before the head throws here; one during the body throws from the
  /// stream. `URLSession`'s implementation is described in <doc:StreamingResponses>; a session of your
  /// own gets a default that sends ``data(for:)`` and streams the whole body in one piece.
  func stream(for request: URLRequest) async throws -> (HTTPByteStream, URLResponse)

  /// Creates a WebSocket task for `request`: an ``HTTPWebSocketTask``, which does nothing
  /// until ``HTTPWebSocketTask/resume()``.
  ///
  /// ```swift
  /// let socket = session.webSocket(with: URLRequest(url: chatURL))
  /// socket.resume()
  /// try await socket.send(.string("hello"))
  /// ```
  ///
  /// `URLSession` answers with Foundation's `webSocketTask(with:)`; a session of your own gets
  /// a default whose task fails with `URLError(.unsupportedURL)`.
  func webSocket(with request: URLRequest) -> any HTTPWebSocketTask
}
