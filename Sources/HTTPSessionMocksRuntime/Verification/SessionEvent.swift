import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One entry in a double's call log: a task was created, resumed, cancelled or completed.
///
/// ``RecordingSession/requests`` holds only what was sent (tasks that were resumed); the events
/// show the whole life of every task, so a test can see a task that was created and never
/// resumed, or one that was cancelled.
///
/// ```swift
/// for event in mock.events { print(event) }
/// // #1 created data task GET https://api.example.com/users/octocat
/// // #1 resumed
/// // #1 completed 200
/// ```
public struct SessionEvent: Sendable, CustomStringConvertible {
  /// Which kind of task an event is about.
  public enum TaskKind: String, Sendable {
    /// A task from `dataTask(with:)` or `data(for:)`.
    case data
    /// A task from `uploadTask(with:from:)` or `upload(for:from:)`.
    case upload
    /// A task from `downloadTask(with:)` or `download(for:)`.
    case download
    /// A task from `webSocket(with:)`: its request is the upgrade.
    case webSocket
  }

  /// What happened to the task.
  public enum Kind: Sendable, Equatable {
    /// The task was created; nothing was sent yet.
    case created(TaskKind)
    /// The task was resumed and its request sent.
    case resumed
    /// The task was cancelled.
    case cancelled
    /// The completion handler ran, with the response's status code (if it was HTTP) or the
    /// error's description.
    case completed(statusCode: Int?, error: String?)
  }

  /// What happened.
  public let kind: Kind
  /// The `taskIdentifier` of the task it happened to.
  public let taskIdentifier: Int
  /// The task's request, with its body.
  public let request: URLRequest

  /// Creates an event; the doubles make these, tests read them.
  public init(kind: Kind, taskIdentifier: Int, request: URLRequest) {
    self.kind = kind
    self.taskIdentifier = taskIdentifier
    self.request = request
  }

  /// A line such as `#3 created data task GET https://example.com/a`.
  public var description: String {
    switch kind {
    case .created(let taskKind):
      return "#\(taskIdentifier) created \(taskKind.rawValue) task \(request.summary)"
    case .resumed:
      return "#\(taskIdentifier) resumed"
    case .cancelled:
      return "#\(taskIdentifier) cancelled"
    case .completed(let statusCode, let error):
      if let error { return "#\(taskIdentifier) completed with error: \(error)" }
      return "#\(taskIdentifier) completed \(statusCode.map(String.init) ?? "(no HTTP status)")"
    }
  }
}
