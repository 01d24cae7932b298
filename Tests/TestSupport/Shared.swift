import Foundation

/// A value behind a lock, for what tests get out of `@Sendable` closures and share between
/// threads and tasks: a handler's answer, a task a handler must reach, a counter, a log.
///
/// ```swift
/// let seen = Shared<[Int]>([])
/// mock.dataTask(with: url) { _, response, _ in
///   seen.append((response as? HTTPURLResponse)?.statusCode ?? -1)
/// }.resume()
/// #expect(seen.current == [200])
/// ```
///
/// The one box the test targets share: a test type that only carries a value out of a closure
/// keeps it in a `Shared` instead of a lock of its own. Never call user code or resume a
/// continuation inside `withLock`.
package final class Shared<Value: Sendable>: @unchecked Sendable {
  // @unchecked Sendable: `value` is only reached through `withLock`, under `lock`.
  private let lock = NSLock()
  private var value: Value

  /// A box holding `value`.
  package init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` on the value under the lock and returns what it returns.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  /// The value now (a copy, read under the lock).
  package var current: Value { withLock { $0 } }
}

extension Shared where Value: RangeReplaceableCollection {
  /// Appends `element` under the lock; fits where a closure is expected
  /// (`observer: seen.append`).
  package func append(_ element: Value.Element) {
    withLock { $0.append(element) }
  }
}
