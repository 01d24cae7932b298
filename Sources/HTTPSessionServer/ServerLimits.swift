/// The limits a ``LoopbackServer`` enforces on every connection.
///
/// A server is an attack surface even on loopback, so each limit has a default that real
/// clients never reach and a test can tighten:
///
/// ```swift
/// let server = try mock.startServer(limits: ServerLimits(headerTimeout: .milliseconds(200)))
/// ```
///
/// The timeouts are real time, not the mock's clock: they protect a socket, and a
/// `VirtualClock` that nobody advances must not keep connections open forever.
public struct ServerLimits: Sendable, Equatable {
  /// The most bytes the request line and the header fields may take together; a longer head
  /// gets `431 Request Header Fields Too Large`. 64 KiB by default.
  public var maxHeadBytes: Int
  /// The most bytes a request body may have; a longer body gets `413 Content Too Large`.
  /// 32 MiB by default.
  public var maxBodyBytes: Int
  /// The most connections open at once; further connections are accepted and closed at once.
  /// Each connection has one thread, so this also bounds the server's threads. 256 by default.
  public var maxConnections: Int
  /// How long a client may take to send a request's head, from the connection's start or from
  /// the request's first byte; a slower client (slowloris) is disconnected. 10 s by default.
  public var headerTimeout: Duration
  /// How long a keep-alive connection may sit idle between requests (or stall in a body)
  /// before the server closes it. 30 s by default.
  public var idleTimeout: Duration
  /// How long the server keeps reading and discarding after it answered a malformed or
  /// over-limit request with a 4xx, so that the client reads the status instead of a reset.
  /// 2 s by default.
  public var lingerTimeout: Duration
  /// The most bytes discarded during that lingering close. 1 MiB by default.
  public var lingerBytes: Int

  /// Creates limits; every parameter has the default described on its property.
  public init(
    maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int = 32 * 1024 * 1024,
    maxConnections: Int = 256, headerTimeout: Duration = .seconds(10),
    idleTimeout: Duration = .seconds(30), lingerTimeout: Duration = .seconds(2),
    lingerBytes: Int = 1024 * 1024
  ) {
    self.maxHeadBytes = maxHeadBytes
    self.maxBodyBytes = maxBodyBytes
    self.maxConnections = maxConnections
    self.headerTimeout = headerTimeout
    self.idleTimeout = idleTimeout
    self.lingerTimeout = lingerTimeout
    self.lingerBytes = lingerBytes
  }
}

extension Duration {
  /// The duration in whole milliseconds, at least 1 and at most `Int32.max`, for `poll`.
  var pollMilliseconds: Int32 {
    let (seconds, attoseconds) = components
    let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
    guard !milliseconds.overflow else { return Int32.max }
    let total = milliseconds.partialValue + attoseconds / 1_000_000_000_000_000
    return Int32(clamping: max(total, 1))
  }
}
