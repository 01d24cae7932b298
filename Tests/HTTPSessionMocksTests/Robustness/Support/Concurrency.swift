import Foundation

/// A value behind a lock, for counters and logs that threads and tasks share in tests.
final class Shared<Value>: @unchecked Sendable {
  // @unchecked Sendable: `value` is only reached through `withLock`, under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  var current: Value { withLock { $0 } }
}

/// Runs `body(index)` on `count` new threads that start together, and returns when every one
/// has finished; the calling Swift task is suspended, never blocked.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
  let ready = DispatchGroup()
  let start = DispatchSemaphore(value: 0)
  let finished = DispatchGroup()
  for index in 0..<count {
    ready.enter()
    finished.enter()
    let thread = Thread {
      ready.leave()
      start.wait()
      body(index)
      finished.leave()
    }
    thread.start()
  }
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    // Release the threads together once all of them exist, then wait for the last one.
    ready.notify(queue: .global()) {
      for _ in 0..<count { start.signal() }
    }
    finished.notify(queue: .global()) { continuation.resume() }
  }
}
