import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The HTTPSession methods, written once for both doubles.

extension RecordingSession
where DataTask == MockTask, UploadTask == MockTask, DownloadTask == MockTask {
  /// Creates a suspended task for `request`; when resumed, the double answers it (from its
  /// stubs, by forwarding, or by holding it for the test) and calls `completionHandler` once.
  public func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    journal.core.enter(
      request, kind: .data, through: .injected, receiver: .handler(completionHandler))
  }

  /// Creates a suspended task for a GET of `url`.
  public func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  /// Creates a suspended upload task; the recorded request carries `bodyData` as its
  /// `httpBody`, so matchers and verifications see it.
  public func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    var sent = request
    sent.httpBody = bodyData
    return journal.core.enter(
      sent, kind: .upload, through: .injected, receiver: .handler(completionHandler))
  }

  /// Creates a suspended download task: the answer's body is written to a fresh temporary
  /// file, whose URL the handler gets; the file is deleted when the handler returns.
  public func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> MockTask {
    journal.core.enter(
      request, kind: .download, through: .injected,
      receiver: .sink(DownloadSink(request: request, keepsFile: false, completionHandler)))
  }

  /// Sends `request` and returns the body and response.
  ///
  /// Cancelling the calling Swift task cancels the request and throws `URLError(.cancelled)`,
  /// with the failing URL in its user info (check its `code`, not equality with a bare
  /// `URLError(.cancelled)`).
  public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await AsyncBridge.data { dataTask(with: request, completionHandler: $0) }
  }

  /// Fetches `url` with a GET and returns the body and response.
  public func data(from url: URL) async throws -> (Data, URLResponse) {
    try await data(for: URLRequest(url: url))
  }

  /// Uploads `bodyData` with `request` and returns the body and response.
  public func upload(for request: URLRequest, from bodyData: Data) async throws -> (
    Data, URLResponse
  ) {
    try await AsyncBridge.data { uploadTask(with: request, from: bodyData, completionHandler: $0) }
  }

  /// Sends `request` and returns the response as soon as its head is answered, with the body
  /// as a stream of pieces.
  ///
  /// A stub's dribbled body (``StubResponse/dribbled(inChunks:over:)``) arrives piece by piece
  /// as the mock's clock reaches each one; any other body arrives whole, in one piece. Leaving
  /// the stream early, or cancelling the task that reads it, cancels the request, which the
  /// journal records as `URLError(.cancelled)`; so does cancelling the calling task before the
  /// head. An unmatched request, or an error answered before the head, throws here.
  public func stream(for request: URLRequest) async throws -> (HTTPByteStream, URLResponse) {
    try await AsyncBridge.stream { head in
      let sink = StreamSink(head)
      let task = journal.core.enter(
        request, kind: .data, through: .injected, receiver: .sink(sink))
      sink.task = task
      return task
    }
  }

  /// Writes the body for `request` to a fresh temporary file and returns its URL; the caller
  /// owns the file.
  public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await AsyncBridge.file { handler in
      journal.core.enter(
        request, kind: .download, through: .injected,
        receiver: .sink(DownloadSink(request: request, keepsFile: true, handler)))
    }
  }
}
