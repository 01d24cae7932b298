/// The waiters that one step of the core satisfies (`waitForRequests`, `waitForExchanges`):
/// taken under the lock, woken once out of it, after the sink.
///
/// Nearly always nobody waits, so "none" is held without an array: a request with nobody
/// waiting neither concatenates, returns nor frees an array (concatenating the two empty lists
/// of waiters was a measurable part of every request in the `mock` benchmark).
struct Wakeups {
  private var continuations: [CheckedContinuation<Void, any Error>]?

  /// Nobody to wake.
  static var none: Wakeups { Wakeups(continuations: nil) }

  private init(continuations: [CheckedContinuation<Void, any Error>]?) {
    self.continuations = continuations
  }

  /// These continuations (none when `continuations` is empty).
  init(_ continuations: [CheckedContinuation<Void, any Error>]) {
    self.continuations = continuations.isEmpty ? nil : continuations
  }

  /// The waiters of both steps, this one's first.
  static func + (first: Wakeups, second: Wakeups) -> Wakeups {
    guard let head = first.continuations else { return second }
    guard let tail = second.continuations else { return first }
    return Wakeups(continuations: head + tail)
  }

  /// Resumes every waiter. Call it outside the lock.
  // Inlined, with the resuming out of line: a call on every request cost about 33
  // instructions (`mock` benchmark) to find nobody waiting.
  @inline(__always)
  func wake() {
    guard let continuations else { return }
    Self.resume(continuations)
  }

  @inline(never)
  private static func resume(_ continuations: [CheckedContinuation<Void, any Error>]) {
    for continuation in continuations { continuation.resume() }
  }
}
