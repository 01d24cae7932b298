/// How ``GitHubClient`` retries a `GET` that GitHub answers with `503 Service Unavailable`.
///
/// After a failed attempt the client sleeps on its clock, then tries again, at most
/// ``maximumAttempts`` times in all. The pause doubles each time from ``initialDelay``, unless
/// the answer carries `Retry-After: <seconds>`, which wins; either way it is capped at
/// ``maximumDelay``. Only `GET`s are retried: creating an issue twice is worse than failing.
///
/// ```swift
/// let client = GitHubClient(retryPolicy: RetryPolicy(maximumAttempts: 5))
/// ```
///
/// In tests, give the client a `VirtualClock` and the back-off takes no real time:
///
/// ```swift
/// let clock = VirtualClock()
/// let client = GitHubClient(clock: clock)
/// let call = Task { try await client.fetchUser("octocat") }  // first answer: 503
/// try await clock.waitForSleepers(count: 1)
/// await clock.advance(by: .seconds(1))                       // the retry is sent now
/// ```
public struct RetryPolicy: Equatable, Sendable {
  /// How many times a request is sent at most, the first attempt included.
  ///
  /// With `3`, a `GET` answered `503` three times fails with
  /// ``GitHubError/httpStatus(_:body:)`` after two pauses.
  public var maximumAttempts: Int
  /// The pause after the first failed attempt; each later pause is twice the one before.
  ///
  /// With `.seconds(1)`: 1 s, 2 s, 4 s, … up to ``maximumDelay``.
  public var initialDelay: Duration
  /// The longest pause, whatever the back-off or `Retry-After` asks for.
  ///
  /// It keeps a server that answers `Retry-After: 3600` from stalling the caller for an hour.
  public var maximumDelay: Duration

  /// Creates a policy; a `maximumAttempts` below one is treated as one.
  ///
  /// ```swift
  /// let patient = RetryPolicy(maximumAttempts: 6, initialDelay: .milliseconds(500))
  /// ```
  public init(
    maximumAttempts: Int = 3, initialDelay: Duration = .seconds(1),
    maximumDelay: Duration = .seconds(30)
  ) {
    self.maximumAttempts = max(1, maximumAttempts)
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
  }

  /// Three attempts, pausing 1 s and then 2 s.
  ///
  /// ```swift
  /// #expect(RetryPolicy.standard.delay(afterAttempt: 2) == .seconds(2))
  /// ```
  public static var standard: RetryPolicy { RetryPolicy() }

  /// One attempt: a `503` fails at once.
  ///
  /// ```swift
  /// let client = GitHubClient(retryPolicy: .never)
  /// ```
  public static var never: RetryPolicy { RetryPolicy(maximumAttempts: 1) }

  /// The pause after failed attempt number `attempt` (counting from 1).
  ///
  /// `retryAfter` is the server's `Retry-After`, which replaces the back-off; the result is
  /// never more than ``maximumDelay``.
  ///
  /// ```swift
  /// RetryPolicy.standard.delay(afterAttempt: 1)                            // 1 s
  /// RetryPolicy.standard.delay(afterAttempt: 2)                            // 2 s
  /// RetryPolicy.standard.delay(afterAttempt: 1, retryAfter: .seconds(7))   // 7 s
  /// ```
  public func delay(afterAttempt attempt: Int, retryAfter: Duration? = nil) -> Duration {
    if let retryAfter { return min(max(retryAfter, .zero), maximumDelay) }
    var delay = initialDelay
    for _ in 1..<max(1, attempt) {
      delay *= 2
      if delay >= maximumDelay { break }
    }
    return min(delay, maximumDelay)
  }
}
