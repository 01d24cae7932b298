import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `--unmatched passthrough URL`: a real `URLSession` that sends each request to URL's scheme,
/// host and port instead of its own, without the client's `Host` header (it named this
/// server), so that the mock's pass-through policy reaches the upstream server.
struct Upstream: HTTPSession {
  let origin: URLComponents
  let session: URLSession

  init(origin: URLComponents) {
    self.origin = origin
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    session = URLSession(configuration: configuration)
  }

  /// `request` sent to the upstream server.
  func rebased(_ request: URLRequest) -> URLRequest {
    var request = request
    if let url = request.url, var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) {
      parts.scheme = origin.scheme
      parts.host = origin.host
      parts.port = origin.port
      if let rebased = parts.url { request.url = rebased }
    }
    request.setValue(nil, forHTTPHeaderField: "Host")
    return request
  }

  func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> URLSessionDataTask {
    session.dataTask(with: rebased(request), completionHandler: completionHandler)
  }

  func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> URLSessionDataTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> URLSessionUploadTask {
    session.uploadTask(with: rebased(request), from: bodyData, completionHandler: completionHandler)
  }

  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> URLSessionDownloadTask {
    session.downloadTask(with: rebased(request), completionHandler: completionHandler)
  }

  func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await session.data(for: rebased(request))
  }

  func data(from url: URL) async throws -> (Data, URLResponse) {
    try await data(for: URLRequest(url: url))
  }

  func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
    try await session.upload(for: rebased(request), from: bodyData)
  }

  func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await session.download(for: rebased(request))
  }
}
