import Foundation

/// An object a test captures in a closure or hands to a double, then holds only weakly, to see
/// when the double lets go of it.
final class LifeProbe: Sendable, CustomStringConvertible {
  let name: String

  init(_ name: String) {
    self.name = name
  }

  var description: String { "LifeProbe(\(name))" }
}

/// A named weak reference, to see whether the doubles still hold an object.
struct WeakRef: @unchecked Sendable {
  // @unchecked Sendable: a weak reference is loaded atomically by the runtime, and the tests
  // only read `object` to compare it with nil.
  weak var object: AnyObject?
  let name: String

  init(_ object: AnyObject, _ name: String) {
    self.object = object
    self.name = name
  }

  var isAlive: Bool { object != nil }
}

/// The names of the references in `refs` whose objects are still alive.
func survivors(_ refs: [WeakRef]) -> [String] {
  refs.filter(\.isAlive).map(\.name)
}
