import Foundation
import HTTPSessionKit
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` of the test's own whose tasks call their completion handler twice on
/// `resume()` (status 200, then 500): a wrapped session that breaks URLSession's promise.
final class AnsweringTwiceSession: HTTPSession, Sendable {
  final class TwiceTask: HTTPDataTask, Sendable {
    private let request: URLRequest
    private let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    private let resumed = Shared(false)

    init(
      _ request: URLRequest,
      _ handler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) {
      self.request = request
      self.handler = handler
    }

    var state: URLSessionTask.State { resumed.current ? .completed : .suspended }
    var taskIdentifier: Int { 1 }
    func cancel() {}
    func resume() {
      resumed.withLock { $0 = true }
      for status in [200, 500] {
        let response = HTTPURLResponse(
          url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)
        handler(Data("\(status)".utf8), response, nil)
      }
    }
  }

  func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> TwiceTask {
    TwiceTask(request, completionHandler)
  }

  func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> TwiceTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> TwiceTask {
    dataTask(with: request, completionHandler: completionHandler)
  }

  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> TwiceTask {
    TwiceTask(request) { _, response, error in completionHandler(nil, response, error) }
  }

  func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    throw URLError(.unsupportedURL)
  }

  func data(from url: URL) async throws -> (Data, URLResponse) {
    throw URLError(.unsupportedURL)
  }

  func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
    throw URLError(.unsupportedURL)
  }

  func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    throw URLError(.unsupportedURL)
  }
}
