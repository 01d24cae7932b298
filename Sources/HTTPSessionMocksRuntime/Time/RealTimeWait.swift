/// Waits on a condition that another thread will meet, with a real-time limit.
///
/// Used by `waitForRequests(count:timeout:)` and `VirtualClock.waitForSleepers(count:timeout:)`:
/// no polling, no sleeps in the caller; a timer task fails the wait if the limit passes first,
/// and cancelling the waiting task ends it with `CancellationError`.
enum RealTimeWait {
  typealias Continuation = CheckedContinuation<Void, any Error>

  /// A token whose identity names one wait in its owner's table of waiters.
  final class Token: Sendable {}

  /// - Parameters:
  ///   - register: Stores the continuation under the id, or returns `true` if the condition
  ///     already holds (then nothing is stored).
  ///   - unregister: Removes and returns the continuation if it is still stored.
  ///   - timedOut: Reports the failure and makes the error to throw.
  static func run(
    timeout: Duration,
    register: (ObjectIdentifier, Continuation) -> Bool,
    unregister: @escaping @Sendable (ObjectIdentifier) -> Continuation?,
    timedOut: @escaping @Sendable () -> any Error
  ) async throws {
    let token = Token()
    let id = ObjectIdentifier(token)
    let timer = Locked<Task<Void, Never>?>(nil)
    defer { timer.withLock { $0 }?.cancel() }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: Continuation) in
        if register(id, continuation) {
          continuation.resume()
          return
        }
        if Task.isCancelled {
          unregister(id)?.resume(throwing: CancellationError())
          return
        }
        let task = Task {
          try? await Task.sleep(for: timeout)
          guard !Task.isCancelled, let continuation = unregister(id) else { return }
          continuation.resume(throwing: timedOut())
        }
        timer.withLock { $0 = task }
      }
    } onCancel: {
      unregister(id)?.resume(throwing: CancellationError())
    }
    withExtendedLifetime(token) {}
  }
}
