/// The package's seeded random source (SplitMix64): what delay distributions, `randomValue` and
/// `pickRandom` draw from, so that a replayed test gets the same delays and values.
struct SeededRandom: Sendable {
  /// The golden-ratio step SplitMix64 adds for each draw; also how callers spread a seed by a
  /// count (`seed &+ count &* SeededRandom.step`).
  static let step: UInt64 = 0x9E37_79B9_7F4A_7C15

  private var state: UInt64

  init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  mutating func next() -> UInt64 {
    state &+= Self.step
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<count` (`count` > 0).
  mutating func below(_ count: Int) -> Int {
    Int(next() % UInt64(max(count, 1)))
  }

  /// A number in `0..<1`, from the top 53 bits.
  mutating func unit() -> Double {
    Double(next() >> 11) / Double(1 << 53)
  }
}
