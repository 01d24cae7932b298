import Foundation

/// A mutual-exclusion lock around one value, for the doubles' `State` structs.
///
/// `Synchronization.Mutex` needs macOS 15 / iOS 18; this package supports macOS 13 / iOS 16,
/// so it wraps `NSLock`. Never call user code or resume a continuation inside `withLock`.
final class Locked<Value>: @unchecked Sendable {
  // @unchecked Sendable: `value` is only read or written while `lock` is held.
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
}
