/// The error a `waitFor…` call throws when its real-time limit passes first.
///
/// The full ``message`` has already been reported as a test failure at the caller's line, so the
/// error describes itself briefly: a test that lets it propagate is not told the same thing twice.
public struct WaitTimeoutError: Error, Sendable, CustomStringConvertible {
  /// What was awaited and what was seen instead.
  public let message: String
  /// The wait that timed out, such as `waitForRequests(count: 2)`.
  public let wait: String

  /// Creates the error for `wait`, with the `message` that was reported; only the package's
  /// waits throw it.
  init(wait: String, message: String) {
    self.wait = wait
    self.message = message
  }

  /// `waitForRequests(count: 2) timed out; the failure recorded at the call says why.`
  public var description: String {
    "\(wait) timed out; the failure recorded at the call says why."
  }
}
