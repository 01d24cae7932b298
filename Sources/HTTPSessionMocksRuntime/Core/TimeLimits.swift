import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The time limits of one request, as URLSession applies them.
///
/// - `idle` is the request timeout (`URLRequest.timeoutInterval`, or a bridged configuration's
///   `timeoutIntervalForRequest`): the longest the request may wait for its next piece of data.
///   Every piece that arrives (the head, each piece of a streamed body) starts it again, so a
///   steady stream never trips it however long it lasts, and a stream that goes quiet for
///   longer fails with `URLError(.timedOut)`.
/// - `total` is the resource timeout (`timeoutIntervalForResource`): the longest the whole
///   transfer may take, counted from the request's start.
///
/// A request that came over the loopback server has no request timeout of its own: the
/// `URLRequest` the server builds for it carries Foundation's default, which its client never
/// sent. Its client times out on its own side.
struct TimeLimits: Sendable, Equatable {
  var idle: Duration?
  var total: Duration?

  /// No limit at all.
  static let none = TimeLimits(idle: nil, total: nil)

  /// The limits of `request`, which came through a door with these `traits`, with the
  /// double's resource timeout `resourceTimeout` (`nil`: none). A session configuration's
  /// timeouts, where the door knows them, stand in for the double's and for the request's
  /// default.
  init(for request: URLRequest, traits: DoorTraits, resourceTimeout: Duration?) {
    let configured = traits.configuredLimits
    self.idle =
      traits.hasRequestTimeout
      ? Self.requestTimeout(request.timeoutInterval, configured: configured?.idle) : nil
    self.total = configured?.total ?? resourceTimeout
  }

  init(idle: Duration?, total: Duration?) {
    self.idle = idle
    self.total = total
  }

  /// The longest wait for the response head, after which the request times out: the tighter of
  /// the two limits.
  var head: Duration? {
    switch (idle, total) {
    case (let idle?, let total?): return min(idle, total)
    case (let idle?, nil): return idle
    case (nil, let total?): return total
    case (nil, nil): return nil
    }
  }

  /// Foundation's default request timeout, which a request carries unless the code set another.
  static let defaultRequestTimeout: TimeInterval = 60

  /// A request's timeout as a duration: `nil` for none (zero, negative, not finite, or longer
  /// than any test could wait, so that no value traps). A bridged configuration's own
  /// `timeoutIntervalForRequest` (`configured`) stands in for a request that kept the default.
  static func requestTimeout(_ interval: TimeInterval, configured: Duration? = nil) -> Duration? {
    // The common case, without converting (every task works this out when it is made).
    if interval == defaultRequestTimeout { return configured ?? defaultIdle }
    return duration(interval)
  }

  /// ``defaultRequestTimeout`` as a duration.
  private static let defaultIdle = Duration.seconds(60)

  /// `interval` as a duration, or `nil` when it sets no limit (zero, negative, not finite, or
  /// beyond a century, which no clock in a test reaches).
  static func duration(_ interval: TimeInterval) -> Duration? {
    guard interval.isFinite, interval > 0, interval < 3_155_760_000 else { return nil }
    return .seconds(interval)
  }
}
