/// Values keyed by stub id (ids count up from 1), in an array instead of a hash table: routing
/// looks stubs up on every request.
struct StubSlots<Value: Sendable>: Sendable {
  private var slots: [Value?] = []
  private(set) var count = 0

  subscript(id: Int) -> Value? {
    get { id > 0 && id <= slots.count ? slots[id - 1] : nil }
    set {
      guard id > 0 else { return }
      while slots.count < id { slots.append(nil) }
      count += (newValue != nil ? 1 : 0) - (slots[id - 1] != nil ? 1 : 0)
      slots[id - 1] = newValue
    }
  }

  /// Reads the value for `id` without copying it; `nil` if there is none.
  func read<Result>(_ id: Int, _ body: (Value) -> Result) -> Result? {
    guard id > 0, id <= slots.count else { return nil }
    return slots[id - 1].map(body)
  }

  /// Changes the value for `id` in place; `nil` if there is none.
  mutating func update<Result>(_ id: Int, _ body: (inout Value) -> Result) -> Result? {
    guard id > 0, id <= slots.count, slots[id - 1] != nil else { return nil }
    // In place, through the array's and the optional's modify accessors: nothing is copied.
    return body(&slots[id - 1]!)
  }

  @discardableResult
  mutating func removeValue(forKey id: Int) -> Value? {
    let old = self[id]
    self[id] = nil
    return old
  }

  var values: [Value] { slots.compactMap { $0 } }
}
