/// A weak reference that can cross threads: set once, in `init`, and only read after.
final class WeakReference<Object: AnyObject & Sendable>: @unchecked Sendable {
  // @unchecked Sendable: `object` is written only in `init`; weak loads are atomic.
  private(set) weak var object: Object?

  init(_ object: Object) {
    self.object = object
  }
}
