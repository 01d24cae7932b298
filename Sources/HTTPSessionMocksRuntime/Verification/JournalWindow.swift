/// One list of the journal: everything appended, or, once bounded, only the newest `limit`
/// elements, in a ring so that an append costs the same however long the server runs.
///
/// It counts every element ever appended, so that the journal can say how many it dropped.
struct JournalWindow<Element> {
  private var storage: [Element] = []
  /// Where the oldest element is in `storage`, once the ring is full and has wrapped.
  private var head = 0
  /// The most elements kept; `nil` keeps them all.
  private(set) var limit: Int?
  /// How many elements were appended and are no longer kept (counted only when one is
  /// dropped, so that an append to an unbounded window does nothing else).
  private(set) var dropped = 0

  init() {}

  /// How many elements were ever appended.
  var total: Int { storage.count + dropped }

  /// The kept elements, oldest first.
  var elements: [Element] {
    head == 0 ? storage : Array(storage[head...]) + storage[..<head]
  }

  // Inlined: it runs three times for every request, and in place it costs what
  // `Array.append` costs.
  @inline(__always)
  mutating func append(_ element: consuming Element) {
    guard let limit, storage.count >= limit else {
      storage.append(element)
      return
    }
    dropped += 1
    guard limit > 0 else { return }
    storage[head] = element
    head = head + 1 == limit ? 0 : head + 1
  }

  /// Keeps only the newest `limit` elements from now on (at most `limit` of those kept now).
  mutating func bound(to limit: Int) {
    let limit = max(limit, 0)
    if let current = self.limit, current <= limit { return }
    let kept = elements.suffix(limit)
    dropped += storage.count - kept.count
    storage = Array(kept)
    head = 0
    self.limit = limit
  }
}
