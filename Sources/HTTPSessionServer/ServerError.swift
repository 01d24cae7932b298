import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why ``LoopbackServer`` could not start.
public struct ServerError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong, for matching in a test.
  public enum Code: Sendable, Equatable {
    /// The host is not a loopback address; the server only binds `127.0.0.0/8`, `::1` and
    /// `localhost`.
    case notLoopback
    /// The port is outside 0...65535.
    case invalidPort
    /// The origin to answer as is not an `http` or `https` URL with a host and nothing after
    /// its port.
    case invalidOrigin
    /// A socket call failed; `errno` is in ``ServerError/errorNumber``.
    case system
  }

  /// What went wrong.
  public let code: Code
  /// The `errno` of a failed socket call, 0 otherwise.
  public let errorNumber: Int32
  /// A sentence that says what happened and what to do.
  public let description: String

  static func notLoopback(_ host: String) -> ServerError {
    ServerError(
      code: .notLoopback, errorNumber: 0,
      description:
        "LoopbackServer only binds loopback addresses (127.0.0.0/8, ::1, localhost), so that a "
        + "test never exposes its stubs to the network; \"\(host)\" is not one. Use the default "
        + "host \"127.0.0.1\".")
  }

  static func invalidPort(_ port: Int) -> ServerError {
    ServerError(
      code: .invalidPort, errorNumber: 0,
      description: "\(port) is not a TCP port; pass 0 (an ephemeral port) or 1...65535.")
  }

  static func invalidOrigin(_ origin: URL) -> ServerError {
    ServerError(
      code: .invalidOrigin, errorNumber: 0,
      description:
        "\(origin.absoluteString) is not an origin to answer as: give an http or https URL with "
        + "a host and, optionally, a port, and nothing after it, such as "
        + "https://api.example.com.")
  }

  static func system(_ call: String, _ number: Int32) -> ServerError {
    let text = String(cString: strerror(number))
    var advice = ""
    if number == EADDRINUSE {
      advice = " Another process holds the port; pass port 0 to get a free one."
    }
    return ServerError(
      code: .system, errorNumber: number,
      description: "LoopbackServer: \(call)() failed: \(text) (errno \(number)).\(advice)")
  }
}

extension ServerError: LocalizedError {
  /// The ``description``, so that `localizedDescription` says what happened and what to do.
  public var errorDescription: String? { description }
}
