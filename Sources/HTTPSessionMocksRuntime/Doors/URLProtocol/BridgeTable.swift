import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// MARK: - One protocol class per mock

/// A type that stands for one slot number of ``BridgeTable``: ``SlotEnd`` is slot 0, and each
/// ``SlotBit0`` or ``SlotBit1`` around a tag appends one binary digit to it.
protocol BridgeTag {
  /// The slot number this type spells.
  static var slot: Int { get }
}

/// Slot 0, and the innermost type of every other slot's tag.
enum SlotEnd: BridgeTag {
  static var slot: Int { 0 }
}

/// The slot `2 × Higher.slot`: a 0 bit appended to `Higher`.
enum SlotBit0<Higher: BridgeTag>: BridgeTag {
  static var slot: Int { Higher.slot << 1 }
}

/// The slot `2 × Higher.slot + 1`: a 1 bit appended to `Higher`.
enum SlotBit1<Higher: BridgeTag>: BridgeTag {
  static var slot: Int { Higher.slot << 1 | 1 }
}

/// The URLProtocol bridge of the mock in slot `Tag.slot`.
///
/// URL loading knows a protocol only by its class: a configuration's `protocolClasses` is a
/// list of classes, and URLSession creates an instance of the first one that accepts the
/// request. To keep two mocks in two parallel tests apart, each mock needs a class of its own,
/// yet Swift cannot create classes at run time. A generic class can: `Bridge<A>` and
/// `Bridge<B>` are two classes for two distinct types `A` and `B`. So every mock gets a slot
/// number, and the slot number is spelled as a type, one generic wrapper per binary digit
/// (slot 6 is `SlotBit0<SlotBit1<SlotBit1<SlotEnd>>>`), which any number of slots can be built
/// from at run time with two generic types. The bridge reads its slot back from its tag
/// (`Tag.slot`) and finds its mock in ``BridgeTable``. Nothing is ever sent in the request to
/// say which mock answers (a URLProtocol does not see the configuration's
/// `httpAdditionalHeaders` on Apple platforms, so that way does not work).
final class Bridge<Tag: BridgeTag>: MockURLProtocol {
  override class func canInit(with request: URLRequest) -> Bool { true }

  override class func canInit(with task: URLSessionTask) -> Bool { true }

  override func answeringMock() -> URLSessionMock? {
    BridgeTable.mock(inSlot: Tag.slot)
  }

  override func routingContext() -> TestContextRelay? {
    BridgeTable.context(inSlot: Tag.slot)
  }

  override func bridgeProfile() -> BridgeProfile {
    BridgeTable.profile(inSlot: Tag.slot)
  }

  override var missingMockReason: String {
    "the URLSessionMock behind this URLSession was released; keep the mock for as long as the "
      + "session makes requests"
  }
}

/// The process-wide table from bridge class to mock: the first of the package's two contained
/// exceptions to "no global state" (the other is ``SharedSessionGate``).
///
/// A slot holds only a weak reference to its mock, so the table never keeps a mock alive; when
/// the mock goes, its slot is free. A session made for a mock that is gone fails its requests
/// with `URLError(.resourceUnavailable)` rather than reach the network. Slots are reused, but
/// late: fresh slots are handed out until ``SlotAllocator/freshSlots`` exist, and only then the
/// slot freed longest ago, so that a session that outlives its mock (a request still in flight
/// when a test ends) does not reach the mock of a later test. The classes made for the slots are
/// kept (a few hundred bytes of type metadata each). Parallel tests share the table, never a
/// slot.
///
/// A slot also holds the test context captured where the test last routed a configuration to
/// its mock (``URLSessionMock/intercept(_:)``, ``URLSessionMock/makeURLSession(configuration:delegate:delegateQueue:)``),
/// for the protocol objects that URL loading makes where no test runs (see
/// ``MockURLProtocol``). It lives as long as the slot's mock, or until a later capture replaces
/// it, and is let go outside the table's lock.
enum BridgeTable {
  private struct Registration {
    let mock: WeakReference<URLSessionMock>
    /// The test context that the mock's bridge runs a request's work in when URL loading made
    /// the protocol object where no test runs.
    var context: TestContextRelay?
    /// What the slot's sessions are known to need (a mock's first slot: the default).
    var profile = BridgeProfile.default
  }

  private struct Table {
    var registrations: [Registration?] = []
    var classes: [URLProtocol.Type] = []
    var slots = SlotAllocator()
  }

  private static let table = Locked(Table())

  /// The bridge class of `mock`, taking a slot for it on first use; `context`, when there is
  /// one, becomes the slot's test context, in place of the one captured before. A profile other
  /// than the default takes a slot of its own for the same mock (see ``BridgeProfile``).
  static func protocolClass(
    for mock: URLSessionMock, context: TestContextRelay?, profile: BridgeProfile = .default
  ) -> URLProtocol.Type {
    guard profile == .default else {
      return mock.bridgeProfileSlots.withLock { known in
        let (protocolClass, slot) = register(
          mock, in: known[profile], context: context, profile: profile)
        known[profile] = slot
        return protocolClass
      }
    }
    // The mock's own lock first, then the table's: two threads asking for the same mock's
    // class at once get the same slot.
    return mock.bridgeSlot.withLock { known in
      let (protocolClass, slot) = register(
        mock, in: known, context: context, profile: .default)
      known = slot
      return protocolClass
    }
  }

  /// Registers `mock` in slot `known` (a fresh slot if `nil`) with `profile`; returns its class
  /// and slot. The test context it replaces is let go outside the table's lock.
  private static func register(
    _ mock: URLSessionMock, in known: Int?, context: TestContextRelay?, profile: BridgeProfile
  ) -> (URLProtocol.Type, Int) {
    let (protocolClass, slot, replaced) = table.withLock {
      table -> (URLProtocol.Type, Int, TestContextRelay?) in
      let slot = known ?? table.slots.take()
      while table.registrations.count <= slot { table.registrations.append(nil) }
      // A slot taken afresh held no registration: `release` cleared it.
      let previous = known == nil ? nil : table.registrations[slot]?.context
      table.registrations[slot] = Registration(
        mock: WeakReference(mock), context: context ?? previous, profile: profile)
      while table.classes.count <= slot {
        table.classes.append(bridgeClass(tag(for: table.classes.count)))
      }
      return (table.classes[slot], slot, context == nil ? nil : previous)
    }
    // Let go here, outside the table's lock: its task ends when the last protocol object still
    // recording on it is done, and ending it resumes the task's wait for jobs.
    withExtendedLifetime(replaced) {}
    return (protocolClass, slot)
  }

  /// Frees the slot of a mock that is going away, and lets go of its test context.
  static func release(_ slot: Int) {
    let context = table.withLock { table -> TestContextRelay? in
      table.slots.free(slot)
      guard slot < table.registrations.count else { return nil }
      defer { table.registrations[slot] = nil }
      return table.registrations[slot]?.context
    }
    withExtendedLifetime(context) {}  // let go outside the lock
  }

  /// The mock in `slot`, if it still exists.
  static func mock(inSlot slot: Int) -> URLSessionMock? {
    table.withLock { table in
      slot < table.registrations.count ? table.registrations[slot]?.mock.object : nil
    }
  }

  /// What the sessions routed through `slot` need (see ``BridgeProfile``).
  static func profile(inSlot slot: Int) -> BridgeProfile {
    table.withLock { table in
      slot < table.registrations.count ? table.registrations[slot]?.profile ?? .default : .default
    }
  }

  /// The test context kept for the mock in `slot`: the one captured where a test last routed a
  /// configuration to it, or `nil` if that never happened in a test.
  static func context(inSlot slot: Int) -> TestContextRelay? {
    table.withLock { table in
      slot < table.registrations.count ? table.registrations[slot]?.context : nil
    }
  }

  /// The calling task's test context, to hand to ``protocolClass(for:context:)``; `nil` outside
  /// a test.
  ///
  /// The relay leaves out the `.verifyingMocks` scope: the scope holds its mocks, and the table
  /// holds the relay for as long as its mock lives, so a relay carrying the scope would keep
  /// both alive for good.
  static func captureContext() -> TestContextRelay? {
    MockVerificationScope.$current.withValue(nil) { TestContextRelay.captureIfInTest() }
  }

  /// The tag type that spells `slot`, built from the highest binary digit down.
  static func tag(for slot: Int) -> any BridgeTag.Type {
    guard slot > 0 else { return SlotEnd.self }
    return appending(bit: slot & 1 == 1, to: tag(for: slot >> 1))
  }

  private static func appending<Higher: BridgeTag>(bit: Bool, to _: Higher.Type)
    -> any BridgeTag.Type
  {
    bit ? SlotBit1<Higher>.self : SlotBit0<Higher>.self
  }

  /// The bridge class for one tag type.
  static func bridgeClass<Tag: BridgeTag>(_: Tag.Type) -> URLProtocol.Type {
    Bridge<Tag>.self
  }
}

/// Which slot the next mock gets: a fresh one while fewer than `freshSlots` exist, then the one
/// freed longest ago (a fresh one again if none is free).
package struct SlotAllocator {
  static let defaultFreshSlots = 4096

  let freshSlots: Int
  /// How many slots exist.
  package private(set) var count = 0
  /// Freed slots, oldest first, from `head` on.
  private var freed: [Int] = []
  private var head = 0

  package init(freshSlots: Int = defaultFreshSlots) {
    self.freshSlots = freshSlots
  }

  package mutating func take() -> Int {
    if count >= freshSlots, head < freed.count {
      defer {
        head += 1
        if head > 64, head * 2 > freed.count {
          freed.removeFirst(head)
          head = 0
        }
      }
      return freed[head]
    }
    count += 1
    return count - 1
  }

  package mutating func free(_ slot: Int) {
    freed.append(slot)
  }
}
