#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Bionic)
  import Bionic
#endif

/// A mutual-exclusion lock around one value, for the doubles' `State` structs: the package's one
/// lock type, which the loopback server's module uses too (hence `package`).
///
/// `Synchronization.Mutex` needs macOS 15 / iOS 18 and this package supports macOS 13 / iOS 16,
/// so the lock is `os_unfair_lock` on Apple platforms and a `pthread_mutex_t` elsewhere, kept in
/// one allocation with the value (as swift-nio's `NIOLockedValueBox` does). Never call user code
/// or resume a continuation inside `withLock`.
package struct Locked<Value>: @unchecked Sendable {
  // @unchecked Sendable: the value is only reached through `withLock`, under the lock.
  private let storage: LockStorage<Value>

  package init(_ value: Value) {
    storage = LockStorage.make(value)
  }

  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try storage.withLock(body)
  }

  /// A weak reference to this lock and its value, for a holder that must not keep them alive.
  var weak: WeakLocked<Value> { WeakLocked(storage) }
}

/// A weak reference to a ``Locked`` value: reaches it while its owner keeps it.
///
/// It refers to the one object that holds the lock and the value, not to their owner: a weak
/// reference gives its object a side table, and from then on every retain and release of that
/// object takes the runtime's slow path. The owner (a session core, which every task retains)
/// stays on the fast path; the lock's object is never retained on a request's way.
struct WeakLocked<Value>: @unchecked Sendable {
  // @unchecked Sendable: as for `Locked`, the value is only reached through `withLock`; the
  // weak reference is written only in `init`, and weak loads are atomic.
  private weak var storage: LockStorage<Value>?

  init(_ storage: LockStorage<Value>) {
    self.storage = storage
  }

  /// Runs `body` under the lock, or returns `nil` when the value is gone.
  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
    try storage?.withLock(body)
  }
}

#if canImport(Darwin)
  typealias LockPrimitive = os_unfair_lock
#else
  typealias LockPrimitive = pthread_mutex_t
#endif

final class LockStorage<Value>: ManagedBuffer<Value, LockPrimitive> {
  static func make(_ value: Value) -> LockStorage<Value> {
    let buffer = create(minimumCapacity: 1) { _ in value }
    let storage = unsafeDowncast(buffer, to: LockStorage<Value>.self)
    storage.withUnsafeMutablePointerToElements { lock in
      #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
      #else
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
      #endif
    }
    return storage
  }

  deinit {
    // ManagedBuffer destroys the header (the value) itself; the lock is ours to destroy.
    withUnsafeMutablePointerToElements { lock in
      #if !canImport(Darwin)
        pthread_mutex_destroy(lock)
      #endif
      lock.deinitialize(count: 1)
    }
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try withUnsafeMutablePointers { value, lock in
      #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
      #else
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
      #endif
      return try body(&value.pointee)
    }
  }
}
