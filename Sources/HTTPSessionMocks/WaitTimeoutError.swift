/// The error a `waitFor…` call throws when its real-time limit passes first.
///
/// The same message has already been reported as a test failure at the caller's line.
public struct WaitTimeoutError: Error, Sendable, CustomStringConvertible {
  /// What was awaited and what was seen instead.
  public let message: String

  /// The message.
  public var description: String { message }
}
