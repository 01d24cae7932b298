import Foundation
import HTTPSessionKit
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` that answers nothing until the test calls ``settle()``, and delivers a
/// cancellation only then too, so that a ``SpySession`` wrapping it keeps its tasks in the
/// `canceling` state for a while, as a real URLSession does.
///
/// Settled tasks get status 200 with the body `held`, or `URLError(.cancelled)` if they were
/// cancelled; they are delivered in the order they were resumed or cancelled.
final class HeldSession: HTTPSession, Sendable {
  final class HeldTask: HTTPDataTask, @unchecked Sendable {
    // @unchecked Sendable: the `var`s are only touched under the session's lock.
    let taskIdentifier: Int
    let request: URLRequest
    private let session: HeldSession
    var lockedState: URLSessionTask.State = .suspended
    var lockedHandler: (@Sendable (Data?, URLResponse?, (any Error)?) -> Void)?

    init(
      identifier: Int, request: URLRequest, session: HeldSession,
      handler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) {
      self.taskIdentifier = identifier
      self.request = request
      self.session = session
      self.lockedHandler = handler
    }

    var state: URLSessionTask.State { session.queue.withLock { _ in lockedState } }

    func resume() {
      session.queue.withLock { queue in
        guard lockedState == .suspended else { return }
        lockedState = .running
        queue.held.append(self)
      }
    }

    func cancel() {
      session.queue.withLock { queue in
        switch lockedState {
        case .suspended:
          lockedState = .canceling
          queue.held.append(self)
        case .running:
          lockedState = .canceling
        default:
          return
        }
      }
    }
  }

  struct Queue {
    var held: [HeldTask] = []
    var nextIdentifier = 0
  }

  let queue = Shared(Queue())

  /// How many tasks wait for ``settle()``.
  var heldCount: Int { queue.withLock { $0.held.count } }

  /// Delivers every held task, in the order they were resumed or cancelled.
  func settle() {
    let due = queue.withLock { queue -> [(HeldTask, Bool, Handler?)] in
      defer { queue.held = [] }
      return queue.held.map { task in
        let cancelled = task.lockedState == .canceling
        task.lockedState = .completed
        defer { task.lockedHandler = nil }
        return (task, cancelled, task.lockedHandler)
      }
    }
    for (task, cancelled, handler) in due {
      if cancelled {
        handler?(nil, nil, URLError(.cancelled))
      } else {
        let response = HTTPURLResponse(
          url: task.request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
        handler?(Data("held".utf8), response, nil)
      }
    }
  }

  typealias Handler = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

  func dataTask(with request: URLRequest, completionHandler: @escaping Handler) -> HeldTask {
    let identifier = queue.withLock { queue -> Int in
      queue.nextIdentifier += 1
      return queue.nextIdentifier
    }
    return HeldTask(
      identifier: identifier, request: request, session: self, handler: completionHandler)
  }

  func dataTask(with url: URL, completionHandler: @escaping Handler) -> HeldTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  func uploadTask(
    with request: URLRequest, from bodyData: Data?, completionHandler: @escaping Handler
  )
    -> HeldTask
  {
    dataTask(with: request, completionHandler: completionHandler)
  }

  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> HeldTask {
    dataTask(with: request) { _, response, error in completionHandler(nil, response, error) }
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
