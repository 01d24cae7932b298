import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A task that an ``HTTPSession`` hands out: the part of `URLSessionTask` that clients use.
///
/// `URLSessionTask` and its subclasses conform, and so do the doubles' tasks in
/// `HTTPSessionMocks`.
///
/// ```swift
/// let task = session.dataTask(with: url) { data, response, error in ... }
/// task.resume()
/// ```
public protocol HTTPDataTask: AnyObject, Sendable {
  /// Starts the task, or does nothing if it has already started, finished or been cancelled.
  func resume()

  /// Cancels the task; its handler receives `URLError(.cancelled)` unless it has already run.
  func cancel()

  /// Where the task is in its life: suspended, running, canceling or completed.
  var state: URLSessionTask.State { get }

  /// A number that identifies the task within the session that made it.
  var taskIdentifier: Int { get }
}
