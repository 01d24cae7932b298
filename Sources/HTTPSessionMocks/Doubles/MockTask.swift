import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a double does when one of its tasks is resumed or cancelled.
protocol TaskDriver: AnyObject, Sendable {
  func taskDidResume(_ task: MockTask)
  func taskDidCancel(_ task: MockTask)
}

/// The task that ``URLSessionMock`` and ``SpySession`` hand out.
///
/// It follows `URLSessionTask`'s life exactly: nothing happens until ``resume()``; the
/// completion handler runs exactly once; a second `resume()` does nothing; ``cancel()`` before
/// or during delivery hands the handler `URLError(.cancelled)` and wins over a pending answer;
/// `cancel()` after completion does nothing. ``state`` goes `suspended` → `running` →
/// `completed`, passing through `canceling` on cancel. The handler is released once it has run.
public final class MockTask: HTTPDataTask, @unchecked Sendable, CustomStringConvertible {
  // @unchecked Sendable: mutable fields live in `guarded`, behind its lock; the rest is `let`.

  enum Handler {
    case data(@Sendable (Data?, URLResponse?, (any Error)?) -> Void)
    case download(keepsFile: Bool, @Sendable (URL?, URLResponse?, (any Error)?) -> Void)
  }

  private struct Guarded {
    var state: URLSessionTask.State = .suspended
    var handler: Handler?
    var response: URLResponse?
    var error: (any Error)?
    /// Undoes a scheduled delivery (a clock entry, a timer task, a forwarded task).
    var cancelPending: (@Sendable () -> Void)?
  }

  /// A number that identifies the task within the double that made it, from 1.
  public let taskIdentifier: Int
  /// The request the task was created with (for uploads, with the uploaded body).
  public let originalRequest: URLRequest
  /// The request the task sends: the same as ``originalRequest``, since doubles do not redirect.
  public var currentRequest: URLRequest { originalRequest }
  let kind: SessionEvent.TaskKind
  let journal: RequestJournal
  private weak var driver: (any TaskDriver)?
  private let guarded: Locked<Guarded>

  init(
    request: URLRequest, kind: SessionEvent.TaskKind, handler: Handler, journal: RequestJournal,
    driver: any TaskDriver
  ) {
    self.originalRequest = request
    self.kind = kind
    self.journal = journal
    self.driver = driver
    self.guarded = Locked(Guarded(handler: handler))
    self.taskIdentifier = journal.recordCreated(request, kind: kind)
  }

  /// Where the task is in its life.
  public var state: URLSessionTask.State { guarded.withLock { $0.state } }

  /// The response the handler received, once it has run.
  public var response: URLResponse? { guarded.withLock { $0.response } }

  /// The error the handler received, once it has run.
  public var error: (any Error)? { guarded.withLock { $0.error } }

  /// `#1 GET https://example.com/a (running)`.
  public var description: String {
    "#\(taskIdentifier) \(originalRequest.summary) (\(Self.name(of: state)))"
  }

  /// Sends the request, or does nothing if the task has already started, finished or been
  /// cancelled.
  public func resume() {
    let started = guarded.withLock { guarded -> Bool in
      guard guarded.state == .suspended else { return false }
      guarded.state = .running
      return true
    }
    guard started else { return }
    let waiters = journal.recordResumed(originalRequest, taskIdentifier: taskIdentifier)
    if let driver {
      driver.taskDidResume(self)
    } else {
      finish(data: nil, response: nil, error: URLError(.cancelled, for: originalRequest))
    }
    // Only now: a delayed answer is on the clock and a held task is pending when the test wakes.
    for waiter in waiters { waiter.resume() }
  }

  /// Cancels the task: the handler receives `URLError(.cancelled)` unless it has already run.
  public func cancel() {
    let pending = guarded.withLock { guarded -> (@Sendable () -> Void)?? in
      guard guarded.state == .suspended || guarded.state == .running else { return .none }
      guarded.state = .canceling
      defer { guarded.cancelPending = nil }
      return .some(guarded.cancelPending)
    }
    guard let pending else { return }
    journal.recordCancelled(originalRequest, taskIdentifier: taskIdentifier)
    pending?()
    if let driver {
      driver.taskDidCancel(self)
    } else {
      finishCancelled()
    }
  }

  /// Delivers `URLError(.cancelled)` with the failing URL, as URLSession does.
  func finishCancelled() {
    finish(data: nil, response: nil, error: URLError(.cancelled, for: originalRequest))
  }

  /// Stores what undoes the pending delivery; runs it at once if the task was already cancelled.
  func setCancelPending(_ undo: @escaping @Sendable () -> Void) {
    let runNow = guarded.withLock { guarded -> Bool in
      guard guarded.state == .running else { return true }
      guarded.cancelPending = undo
      return false
    }
    if runNow { undo() }
  }

  /// Runs the handler with this answer, unless it has already run. Returns whether it ran.
  @discardableResult
  func finish(data: Data?, response: URLResponse?, error: (any Error)?) -> Bool {
    guard let handler = takeHandler(response: response, error: error) else { return false }
    switch handler {
    case .data(let body):
      body(data, response, error)
    case .download(let keepsFile, let body):
      guard error == nil else {
        body(nil, response, error)
        break
      }
      do {
        let file = try TemporaryFile.write(data ?? Data())
        body(file, response, nil)
        if !keepsFile { try? FileManager.default.removeItem(at: file) }
      } catch {
        body(nil, response, URLError(.cannotCreateFile, for: originalRequest))
      }
    }
    return true
  }

  /// Runs a download handler with a file that already exists (a forwarded download).
  @discardableResult
  func finish(file: URL?, response: URLResponse?, error: (any Error)?) -> Bool {
    guard let handler = takeHandler(response: response, error: error) else { return false }
    switch handler {
    case .data(let body):
      body(file.flatMap { try? Data(contentsOf: $0) }, response, error)
    case .download(let keepsFile, let body):
      // The forwarding session deletes its file when this returns; a kept file must be a copy.
      guard keepsFile, let file else {
        body(file, response, error)
        break
      }
      do {
        let copy = try TemporaryFile.write(Data(contentsOf: file))
        body(copy, response, error)
      } catch {
        body(nil, response, URLError(.cannotCreateFile, for: originalRequest))
      }
    }
    return true
  }

  private func takeHandler(response: URLResponse?, error: (any Error)?) -> Handler? {
    let handler = guarded.withLock { guarded -> Handler? in
      guard let handler = guarded.handler else { return nil }
      guarded.handler = nil
      guarded.cancelPending = nil
      guarded.state = .completed
      guarded.response = response
      guarded.error = error
      return handler
    }
    if handler != nil {
      journal.recordCompleted(
        originalRequest, taskIdentifier: taskIdentifier, response: response, error: error)
    }
    return handler
  }

  static func name(of state: URLSessionTask.State) -> String {
    switch state {
    case .suspended: return "suspended"
    case .running: return "running"
    case .canceling: return "canceling"
    case .completed: return "completed"
    @unknown default: return "unknown"
    }
  }
}

extension URLError {
  /// `URLError(code)` with the failing URL in its user info, as URLSession makes them.
  init(_ code: URLError.Code, for request: URLRequest, description: String? = nil) {
    var info: [String: Any] = [:]
    if let url = request.url {
      info[NSURLErrorFailingURLErrorKey] = url
    }
    if let description { info[NSLocalizedDescriptionKey] = description }
    self.init(code, userInfo: info)
  }
}

/// Fresh files for download answers.
enum TemporaryFile {
  static func write(_ data: Data) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "HTTPSessionMocks-\(UUID().uuidString).tmp")
    try data.write(to: url)
    return url
  }
}
