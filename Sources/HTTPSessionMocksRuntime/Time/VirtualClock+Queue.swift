import Foundation

// The clock's queue: the work due at each deadline, in order.
extension VirtualClock {
  /// Work due at a deadline: a mock delivery, or a sleeping Swift task to resume.
  enum Work {
    /// A mock delivery: called with `false` when it falls due, or with `true` in its place
    /// when the stall watchdog ends it. One closure rather than two keeps a delayed answer to
    /// one allocated context.
    case action(@Sendable (_ stalled: Bool) -> Void)
    case sleeper(Sleeper)
  }

  /// A sleep's continuation, boxed. `CheckedContinuation` is a resilient type, so an entry that
  /// held one directly would have no layout known when this file is compiled, and every copy
  /// of an entry in the queue would go through the runtime's generic value witnesses (see the
  /// virtual-time scenario in the benchmark). A box gives `Entry` a fixed layout.
  final class Sleeper: Sendable {
    let continuation: CheckedContinuation<Void, any Error>

    init(_ continuation: CheckedContinuation<Void, any Error>) {
      self.continuation = continuation
    }
  }

  struct Entry {
    var deadline: Instant
    var id: UInt64
    var work: Work
  }

  /// The pending entries, in order: by deadline, then by insertion (equal deadlines keep their
  /// order).
  ///
  /// Taking the first entry is O(1): a taken slot is cleared (so that what it holds is released
  /// at once) and skipped, and the cleared slots are compacted away once they are half of the
  /// storage. So one `advance` through n entries moves O(n) of them, not the O(n²) that
  /// removing the first element of an array each time does.
  struct EntryQueue {
    private var storage: [Entry?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    /// The first entry's deadline, read without copying the entry.
    var firstDeadline: Instant? { isEmpty ? nil : storage[head]?.deadline }
    /// The pending entries, first to last.
    var entries: [Entry] { storage[head...].compactMap { $0 } }

    /// Inserts after every entry due at or before `entry`'s deadline.
    mutating func insert(_ entry: Entry) {
      // The common case: work scheduled with the same delay, or a growing one, goes last.
      if count > 0, let last = storage[storage.count - 1]?.deadline, last <= entry.deadline {
        storage.append(entry)
        return
      }
      var low = head
      var high = storage.count
      while low < high {
        let mid = (low + high) / 2
        if let other = storage[mid], other.deadline <= entry.deadline {
          low = mid + 1
        } else {
          high = mid
        }
      }
      storage.insert(entry, at: low)
    }

    /// Removes and returns the first entry; `nil` when the queue is empty.
    mutating func takeFirst() -> Entry? {
      guard !isEmpty else { return nil }
      let entry = storage[head].take()
      head += 1
      defer { compactIfSparse() }
      return entry
    }

    /// Drops the taken slots once they are half of the storage, or all of it.
    private mutating func compactIfSparse() {
      if head == storage.count {
        storage.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 32, head * 2 >= storage.count {
        storage.removeFirst(head)
        head = 0
      }
    }

    mutating func remove(id: UInt64) -> Entry? {
      guard let index = storage[head...].firstIndex(where: { $0?.id == id }) else { return nil }
      return storage.remove(at: index)
    }

    /// Empties the queue and returns what it held, first to last.
    mutating func removeAll() -> [Entry] {
      defer {
        storage = []
        head = 0
      }
      return entries
    }
  }
}
