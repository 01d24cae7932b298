import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `URLSessionTask` and its subclasses are the production ``HTTPDataTask``s: `resume()`,
/// `cancel()`, `state` and `taskIdentifier` are their own.
extension URLSessionTask: HTTPDataTask {}

/// `URLSession` is the production ``HTTPSession``: its own task methods satisfy the protocol
/// as they are, and the async methods forward to Foundation's, with no task delegate.
extension URLSession: HTTPSession {
  /// Sends a request with Foundation's `data(for:delegate:)` and no task delegate.
  public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await data(for: request, delegate: nil)
  }

  /// Fetches a URL with Foundation's `data(from:delegate:)` and no task delegate.
  public func data(from url: URL) async throws -> (Data, URLResponse) {
    try await data(from: url, delegate: nil)
  }

  /// Uploads a body with Foundation's `upload(for:from:delegate:)` and no task delegate.
  public func upload(for request: URLRequest, from bodyData: Data) async throws -> (
    Data, URLResponse
  ) {
    try await upload(for: request, from: bodyData, delegate: nil)
  }

  /// Downloads with Foundation's `download(for:delegate:)` and no task delegate.
  public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await download(for: request, delegate: nil)
  }
}
