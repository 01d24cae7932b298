import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A real `URLSession` pointed at a closed loopback port: every request fails with a real
/// connection error at once, and nothing leaves the machine.
///
/// Its delegate queue is serial and owned here, which gives a test two deterministic tools:
/// ``holdDeliveries()`` keeps completion handlers from running (so a task's state can be read
/// before it completes), and ``settle()`` waits until every handler queued so far has returned
/// and the session has marked its task completed.
final class ClosedPortSession: @unchecked Sendable {
  // @unchecked Sendable: both properties are `let`; URLSession and OperationQueue are
  // thread-safe.

  /// `http://127.0.0.1:1/`: a port nothing listens on. Never any other address.
  static let url = URL(string: "http://127.0.0.1:1/")!

  /// The real session.
  let session: URLSession
  private let queue: OperationQueue

  init() {
    queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    session = URLSession(configuration: .ephemeral, delegate: nil, delegateQueue: queue)
  }

  deinit {
    session.finishTasksAndInvalidate()
  }

  /// Keeps completion handlers from running until ``releaseDeliveries()``.
  func holdDeliveries() {
    queue.isSuspended = true
  }

  /// Lets held completion handlers run.
  func releaseDeliveries() {
    queue.isSuspended = false
  }

  /// Suspends until every completion handler queued so far has returned, and the session has
  /// updated its tasks' state (URLSession on Linux marks a task completed only after its
  /// handler returns, on the same queue).
  func settle() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      queue.addOperation { continuation.resume() }
    }
  }
}
