/// A first-in, first-out queue over an array: taking from the front moves a start index
/// instead of every other element, and the taken slots are dropped once they are half the
/// storage (as the clock's queue does).
struct FIFO<Element> {
  private var storage: [Element] = []
  private var head = 0

  var isEmpty: Bool { head == storage.count }

  mutating func append(_ element: Element) { storage.append(element) }

  /// The oldest element, taken out; `nil` when the queue is empty.
  mutating func popFirst() -> Element? {
    guard head < storage.count else { return nil }
    let element = storage[head]
    head += 1
    if head == storage.count {
      storage.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 1024, head * 2 >= storage.count {
      storage.removeFirst(head)
      head = 0
    }
    return element
  }
}

extension FIFO: Sendable where Element: Sendable {}
