import Foundation

/// A random delay for each answer of a stub, WireMock's `delayDistribution`, drawn from a
/// seeded generator so that a test sees the same delays every run.
///
/// ```swift
/// let clock = VirtualClock()
/// let mock = URLSessionMock(clock: clock)
/// mock.stub(.get("/search"), with: .json(results).delayed(by: .uniform(lower: .milliseconds(20),
///   upper: .milliseconds(80))))
/// ```
///
/// The delay of a stub's `n`-th answer depends only on the distribution, its seed and `n`:
/// two mocks with the same stubs give the same delays in the same order. The delays run on the
/// mock's clock, as ``StubResponse/delayed(by:)-(Duration)`` does; with a
/// ``StubResponse/delayed(by:)-(Duration)`` delay as well, the two add up, as in WireMock.
public struct DelayDistribution: Sendable, Equatable, CustomStringConvertible {
  enum Kind: Sendable, Equatable {
    case uniform(lower: Double, upper: Double)
    case logNormal(median: Double, sigma: Double, maximum: Double?)
  }

  let kind: Kind
  /// The generator's seed.
  public let seed: UInt64

  /// Delays spread evenly from `lower` to `upper` (WireMock's `uniform`).
  public static func uniform(lower: Duration, upper: Duration, seed: UInt64 = 0)
    -> DelayDistribution
  {
    let (a, b) = (milliseconds(lower), milliseconds(upper))
    return DelayDistribution(kind: .uniform(lower: min(a, b), upper: max(a, b)), seed: seed)
  }

  /// Delays around `median` with a long tail (WireMock's `lognormal`): `median · e^(σ·Z)`
  /// for a standard normal `Z`, at most `maximum` when it is given.
  public static func logNormal(
    median: Duration, sigma: Double, maximum: Duration? = nil, seed: UInt64 = 0
  ) -> DelayDistribution {
    DelayDistribution(
      kind: .logNormal(
        median: milliseconds(median), sigma: sigma.isFinite ? abs(sigma) : 0,
        maximum: maximum.map(milliseconds)),
      seed: seed)
  }

  static func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
    return value.isFinite ? min(max(0, value), 1e12) : 0
  }

  /// The delay of answer number `call` (counted from 1).
  public func delay(forCall call: Int) -> Duration {
    var random = SeededRandom(seed: seed &+ UInt64(truncatingIfNeeded: call) &* SeededRandom.step)
    func next() -> Double { random.unit() }
    let milliseconds: Double
    switch kind {
    case .uniform(let lower, let upper):
      milliseconds = lower + (upper - lower) * next()
    case .logNormal(let median, let sigma, let maximum):
      // Box-Muller: a standard normal from two uniforms.
      let u = max(next(), .leastNonzeroMagnitude)
      let z = (-2 * log(u)).squareRoot() * cos(2 * Double.pi * next())
      let value = median * exp(sigma * z)
      milliseconds = min(value.isFinite ? value : median, maximum ?? .greatestFiniteMagnitude)
    }
    let capped = min(max(0, milliseconds), 1e12)
    return .microseconds(Int64(capped * 1000))
  }

  /// `uniform 20…80 ms`, `lognormal median 80 ms σ 0.4`.
  public var description: String {
    switch kind {
    case .uniform(let lower, let upper): return "uniform \(lower)…\(upper) ms (seed \(seed))"
    case .logNormal(let median, let sigma, let maximum):
      return "lognormal median \(median) ms σ \(sigma)"
        + (maximum.map { " at most \($0) ms" } ?? "") + " (seed \(seed))"
    }
  }
}
