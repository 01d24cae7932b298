import Foundation

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
