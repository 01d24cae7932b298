import Foundation
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Collects what completion handlers deliver, from any thread, and lets a test await them.
///
/// ```swift
/// let seen = Deliveries()
/// mock.dataTask(with: url, completionHandler: seen.handler).resume()
/// #expect(seen.count == 1)
/// ```
///
/// Awaiting with ``waitForCount(_:)`` is for sessions that answer on their own threads (a real
/// `URLSession`); the mock's synchronous deliveries need no waiting.
final class Deliveries: Sendable {
  /// One call of a completion handler.
  struct Delivery: @unchecked Sendable {
    // @unchecked Sendable: the response and error are immutable once delivered.
    var data: Data?
    var response: URLResponse?
    var error: (any Error)?
    /// For download handlers: the file URL handed over.
    var file: URL?
    /// For download handlers: the file's contents, read while the handler ran.
    var fileContents: Data?
    /// The task's state, read from inside the handler (see ``stateProbe``).
    var stateInHandler: URLSessionTask.State?

    /// The delivered error as a `URLError`, if it is one.
    var urlError: URLError? { error as? URLError }
    /// The delivered response's HTTP status code, if it is HTTP.
    var statusCode: Int? { (response as? HTTPURLResponse)?.statusCode }
  }

  private struct State {
    var items: [Delivery] = []
    var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    var probe: (@Sendable () -> URLSessionTask.State)?
  }

  private let state = Shared(State())

  init() {}

  /// Reads a task's state inside each handler call; set it once the task exists.
  var stateProbe: (@Sendable () -> URLSessionTask.State)? {
    get { state.withLock { $0.probe } }
    set { state.withLock { $0.probe = newValue } }
  }

  /// A data-task completion handler that records what it gets.
  var handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void {
    { data, response, error in
      self.record(Delivery(data: data, response: response, error: error))
    }
  }

  /// A download-task completion handler that records the file and reads its contents.
  var fileHandler: @Sendable (URL?, URLResponse?, (any Error)?) -> Void {
    { file, response, error in
      let contents = file.flatMap { try? Data(contentsOf: $0) }
      self.record(Delivery(response: response, error: error, file: file, fileContents: contents))
    }
  }

  /// Everything delivered so far, in order.
  var all: [Delivery] { state.withLock { $0.items } }
  /// How many times a handler was called.
  var count: Int { all.count }
  /// The first delivery, if any.
  var first: Delivery? { all.first }

  /// Suspends until at least `count` deliveries have arrived.
  func waitForCount(_ count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state -> Bool in
        if state.items.count >= count { return true }
        state.waiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  /// Suspends until the first delivery has arrived, and returns it.
  func firstDelivery() async -> Delivery {
    await waitForCount(1)
    return all[0]
  }

  private func record(_ delivery: Delivery) {
    var delivery = delivery
    delivery.stateInHandler = stateProbe?()
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.items.append(delivery)
      let count = state.items.count
      let met = state.waiters.filter { $0.count <= count }
      state.waiters.removeAll { $0.count <= count }
      return met.map(\.continuation)
    }
    for continuation in ready { continuation.resume() }
  }
}
