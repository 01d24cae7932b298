/// A small seeded random number generator (SplitMix64), so that a random test can be replayed
/// from its seed on any machine and toolchain.
///
/// `Int.random(in:using:)` may change its algorithm between Swift releases, so draws go through
/// ``int(in:)``, whose arithmetic is written here.
struct SplitMix64: RandomNumberGenerator {
  private(set) var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `range`, from the high bits of one draw (Lemire's multiply-shift, without the
  /// rejection step: the bias is below 2^-50 for the small ranges tests use).
  mutating func int(in range: ClosedRange<Int>) -> Int {
    let width = UInt64(range.upperBound - range.lowerBound) + 1
    let high = next().multipliedFullWidth(by: width).high
    return range.lowerBound + Int(high)
  }

  /// `true` with probability `percent` / 100.
  mutating func chance(_ percent: Int) -> Bool {
    int(in: 0...99) < percent
  }

  /// One element of `elements`, which must not be empty.
  mutating func pick<Element>(_ elements: [Element]) -> Element {
    elements[int(in: 0...(elements.count - 1))]
  }
}
