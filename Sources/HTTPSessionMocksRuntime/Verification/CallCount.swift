/// How many times a verification expects matching requests: `.once`, `.never`, `.atLeast(2)`…
///
/// ```swift
/// mock.verify(.get("/users/octocat"), called: .once)
/// mock.verify(.post("/retry"), called: .between(2...3))
/// ```
public struct CallCount: Sendable, Equatable, CustomStringConvertible {
  /// The accepted counts.
  public let range: ClosedRange<Int>

  /// Accepts counts in `range`; negative bounds are treated as zero.
  public init(_ range: ClosedRange<Int>) {
    let lower = max(0, range.lowerBound)
    self.range = lower...max(lower, range.upperBound)
  }

  /// No matching request.
  public static var never: CallCount { CallCount(0...0) }
  /// Exactly one matching request.
  public static var once: CallCount { CallCount(1...1) }
  /// Exactly `count` matching requests.
  public static func exactly(_ count: Int) -> CallCount { CallCount(count...count) }
  /// `count` or more matching requests.
  public static func atLeast(_ count: Int) -> CallCount { CallCount(count...Int.max) }
  /// At most `count` matching requests (zero included).
  public static func atMost(_ count: Int) -> CallCount { CallCount(0...max(0, count)) }
  /// A number of matching requests within `range`.
  public static func between(_ range: ClosedRange<Int>) -> CallCount { CallCount(range) }

  /// Whether `count` is accepted.
  public func accepts(_ count: Int) -> Bool { range.contains(count) }

  /// `never`, `once`, `exactly 3 times`, `at least 2 times`, `at most 1 time`, `2...3 times`.
  public var description: String {
    switch (range.lowerBound, range.upperBound) {
    case (0, 0): return "never"
    case (1, 1): return "once"
    case (let low, Int.max): return "at least \(Self.times(low))"
    case (0, let high): return "at most \(Self.times(high))"
    case (let low, let high) where low == high: return "exactly \(Self.times(low))"
    case (let low, let high): return "between \(low) and \(high) times"
    }
  }

  static func times(_ count: Int) -> String { count == 1 ? "1 time" : "\(count) times" }
}
