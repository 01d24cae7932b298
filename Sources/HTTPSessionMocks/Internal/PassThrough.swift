import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hands a double's task to another session and delivers what that session answers.
enum PassThrough {
  /// Creates, in `session`, the task that stands behind `task`; it is not resumed yet.
  static func makeTask(for task: MockTask, in session: any HTTPSession) -> any HTTPDataTask {
    let request = task.originalRequest
    switch task.kind {
    case .data:
      return session.dataTask(with: request) { data, response, error in
        task.finish(data: data, response: response, error: error)
      }
    case .upload:
      return session.uploadTask(with: request, from: request.httpBody) { data, response, error in
        task.finish(data: data, response: response, error: error)
      }
    case .download:
      return session.downloadTask(with: request) { file, response, error in
        task.finish(file: file, response: response, error: error)
      }
    }
  }

  /// How many forwards the current synchronous call chain is inside: a session that forwards
  /// (directly or through others) to itself would otherwise recurse until the stack overflows.
  @TaskLocal static var depth = 0

  /// The most forwards one request may pass through.
  static let maximumDepth = 16

  /// Sends `task`'s request through `session` now; cancelling `task` cancels it there.
  ///
  /// Returns `false`, having delivered an error, when the request has been forwarded too many
  /// times in a row, as it is when a session forwards to itself.
  @discardableResult
  static func forward(_ task: MockTask, to session: any HTTPSession) -> Bool {
    guard depth < maximumDepth else {
      task.finish(
        data: nil, response: nil,
        error: URLError(
          .resourceUnavailable, for: task.originalRequest,
          description: "forwarded \(maximumDepth) times in a row: a loop of sessions"))
      return false
    }
    let inner = makeTask(for: task, in: session)
    // Weakly: `inner`'s handler holds `task`, and `session` keeps its running task alive.
    task.setCancelPending { [weak inner] in inner?.cancel() }
    $depth.withValue(depth + 1) { inner.resume() }
    return true
  }
}
