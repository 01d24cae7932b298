import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` of the test's own that hands each call to ``target`` from its own code, as
/// an app's wrapper session would: a session the doubles cannot see into.
final class PassingSession: HTTPSession, Sendable {
  /// A task that resumes and cancels the target's task.
  final class PassingTask: HTTPDataTask, Sendable {
    let inner: any HTTPDataTask

    init(_ inner: any HTTPDataTask) {
      self.inner = inner
    }

    var state: URLSessionTask.State { inner.state }
    var taskIdentifier: Int { inner.taskIdentifier }
    func resume() { inner.resume() }
    func cancel() { inner.cancel() }
  }

  /// Where calls go; set after creation, so that a loop of sessions can be built.
  let target = Shared<(any HTTPSession)?>(nil)

  private var session: any HTTPSession {
    target.current ?? URLSessionMock(status: 599)
  }

  func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> PassingTask {
    PassingTask(session.dataTask(with: request, completionHandler: completionHandler))
  }

  func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> PassingTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> PassingTask {
    PassingTask(
      session.uploadTask(with: request, from: bodyData, completionHandler: completionHandler))
  }

  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> PassingTask {
    PassingTask(session.downloadTask(with: request, completionHandler: completionHandler))
  }

  func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await session.data(for: request)
  }

  func data(from url: URL) async throws -> (Data, URLResponse) {
    try await session.data(from: url)
  }

  func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
    try await session.upload(for: request, from: bodyData)
  }

  func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await session.download(for: request)
  }
}
