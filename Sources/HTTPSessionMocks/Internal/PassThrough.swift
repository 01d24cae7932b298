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

  /// Sends `task`'s request through `session` now; cancelling `task` cancels it there.
  static func forward(_ task: MockTask, to session: any HTTPSession) {
    let inner = makeTask(for: task, in: session)
    // Weakly: `inner`'s handler holds `task`, and `session` keeps its running task alive.
    task.setCancelPending { [weak inner] in inner?.cancel() }
    inner.resume()
  }
}
