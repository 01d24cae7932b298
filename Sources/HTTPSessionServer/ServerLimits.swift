/// The limits a ``LoopbackServer`` enforces on every connection, and on the journal of the
/// mock it serves.
///
/// Each limit has a default that real clients never reach and that a test can tighten:
///
/// ```swift
/// let server = try mock.startServer(limits: ServerLimits(headerTimeout: .milliseconds(200)))
/// ```
///
/// The timeouts are real time, not the mock's clock: they protect a socket. Starting a server
/// bounds the served mock's journal to its newest ``maxJournalExchanges`` exchanges; a test that
/// verifies more requests than that passes a larger limit. See "Limits" and "A bounded journal"
/// in <doc:ServingAMockOverLoopback>.
public struct ServerLimits: Sendable, Equatable {
  /// The most bytes the request line and the header fields may take together; a longer head
  /// gets `431 Request Header Fields Too Large`. 64 KiB by default.
  public var maxHeadBytes: Int
  /// The most bytes a request body may have; a longer body gets `413 Content Too Large`.
  /// 32 MiB by default.
  public var maxBodyBytes: Int
  /// The most bytes the body of a request to the admin API (`/__admin` and below) may have,
  /// where smaller than ``maxBodyBytes``; a longer body gets `413 Content Too Large` with
  /// WireMock's error document before it is read. The admin API reads a body into the
  /// package's own JSON values; a mapping with a 30 MiB body raised the server's peak memory
  /// by about five times its size (157 MB). 32 MiB by default.
  public var maxAdminBodyBytes: Int
  /// The most connections open at once; a further connection is answered
  /// `503 Service Unavailable` with `Connection: close` and `Retry-After: 1` at once, and
  /// closed. Each connection has one thread, so this also bounds the server's threads. 256 by
  /// default.
  public var maxConnections: Int
  /// How long a client may take to send a request's head, from the connection's start or from
  /// the request's first byte; a slower client (slowloris) is disconnected. 10 s by default.
  public var headerTimeout: Duration
  /// How long a client may take to send a request's body, from the end of its head to its
  /// last byte, however steadily the bytes come; a slower body gets `408 Request Timeout` and
  /// the connection closes. 30 s by default.
  public var bodyTimeout: Duration
  /// The slowest a request body may arrive: at least this many bytes in every period of
  /// ``minBodyRatePeriod`` until the body is complete, or it gets `408 Request Timeout` and
  /// the connection closes, so that clients trickling bodies cannot hold every connection.
  /// 0 turns the check off. 4 KiB by default (with the default period, about 800 bytes a
  /// second, and a client may pause for up to one period).
  public var minBodyBytesPerPeriod: Int
  /// The period over which ``minBodyBytesPerPeriod`` is measured, from the end of the head.
  /// 5 s by default.
  public var minBodyRatePeriod: Duration
  /// How long a keep-alive connection may sit idle between requests before the server closes
  /// it. 30 s by default.
  public var idleTimeout: Duration
  /// How long the server keeps reading and discarding after it answered a malformed or
  /// over-limit request with a 4xx, so that the client reads the status instead of a reset.
  /// 2 s by default.
  public var lingerTimeout: Duration
  /// The most bytes discarded during that lingering close. 1 MiB by default.
  public var lingerBytes: Int
  /// The most requests and exchanges the journal of the served mock keeps (it keeps four
  /// times as many events): the newest, older ones are dropped, so that a long-running server
  /// keeps bounded memory. 0 keeps none. 10,000 by default.
  public var maxJournalExchanges: Int
  /// The most bytes of a request or response body that the journal of the served mock keeps;
  /// a longer body keeps this prefix and its full size (`Exchange.requestBodyByteCount`,
  /// `Exchange.bodyByteCount`). The mock itself, its stubs and the client see the whole body.
  /// 1 MiB by default.
  public var maxJournalBodyBytes: Int
  /// The most bytes a WebSocket message from a client may have, its fragments joined (and so
  /// the longest frame); a longer one closes the connection with code 1009 (message too big).
  /// 16 MiB by default.
  public var maxWebSocketMessageBytes: Int
  /// How long a WebSocket connection may go without a frame from its client: after half of
  /// it the server sends a ping (real clients answer with a pong), and after all of it the
  /// server closes the connection with code 1001 (going away), so that idle sockets cannot hold
  /// every connection slot. 60 s by default.
  public var webSocketIdleTimeout: Duration
  /// The most real time matching one request against the stubs may take. Patterns that may
  /// take long (regular expressions, JSONPaths, JSON bodies) are matched outside the mock's
  /// lock, so a slow one holds up only its own request; one that runs past this limit fails
  /// that request with `500 Internal Server Error` and a report that names the pattern (the
  /// test hears it too). 1 s by default.
  public var maxMatchDuration: Duration
  /// The most values one JSONPath evaluation may select (`$..*..*` selects more at each step
  /// than the document has): past it, the request fails as for ``maxMatchDuration``. 100,000
  /// by default.
  public var maxJSONPathValues: Int

  /// Creates limits; every parameter has the default described on its property.
  public init(
    maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int = 32 * 1024 * 1024,
    maxConnections: Int = 256, headerTimeout: Duration = .seconds(10),
    bodyTimeout: Duration = .seconds(30), minBodyBytesPerPeriod: Int = 4096,
    minBodyRatePeriod: Duration = .seconds(5), idleTimeout: Duration = .seconds(30),
    lingerTimeout: Duration = .seconds(2), lingerBytes: Int = 1024 * 1024,
    maxJournalExchanges: Int = 10_000, maxJournalBodyBytes: Int = 1024 * 1024,
    maxWebSocketMessageBytes: Int = 16 * 1024 * 1024, webSocketIdleTimeout: Duration = .seconds(60),
    maxAdminBodyBytes: Int = 32 * 1024 * 1024, maxMatchDuration: Duration = .seconds(1),
    maxJSONPathValues: Int = 100_000
  ) {
    self.maxAdminBodyBytes = maxAdminBodyBytes
    self.maxHeadBytes = maxHeadBytes
    self.maxBodyBytes = maxBodyBytes
    self.maxConnections = maxConnections
    self.headerTimeout = headerTimeout
    self.bodyTimeout = bodyTimeout
    self.minBodyBytesPerPeriod = minBodyBytesPerPeriod
    self.minBodyRatePeriod = minBodyRatePeriod
    self.idleTimeout = idleTimeout
    self.lingerTimeout = lingerTimeout
    self.lingerBytes = lingerBytes
    self.maxJournalExchanges = maxJournalExchanges
    self.maxJournalBodyBytes = maxJournalBodyBytes
    self.maxWebSocketMessageBytes = maxWebSocketMessageBytes
    self.webSocketIdleTimeout = webSocketIdleTimeout
    self.maxMatchDuration = maxMatchDuration
    self.maxJSONPathValues = maxJSONPathValues
  }
}

extension Duration {
  /// The duration in whole milliseconds, at least 1 and at most `Int32.max`, for `poll`.
  var pollMilliseconds: Int32 {
    let (seconds, attoseconds) = components
    let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
    guard !milliseconds.overflow else { return seconds < 0 ? 1 : Int32.max }
    let total = milliseconds.partialValue.addingReportingOverflow(
      attoseconds / 1_000_000_000_000_000)
    guard !total.overflow else { return seconds < 0 ? 1 : Int32.max }
    return Int32(clamping: max(total.partialValue, 1))
  }

  /// The duration in nanoseconds for a deadline on the uptime clock: 0 for a negative one, at
  /// most `UInt64.max / 2`, so that `now + nanoseconds` cannot overflow however long a limit
  /// is (a limit of centuries waits as long as forever).
  var deadlineNanoseconds: UInt64 {
    let (seconds, attoseconds) = components
    let cap = UInt64.max / 2
    guard seconds >= 0 else { return 0 }
    let whole = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    guard !whole.overflow, whole.partialValue < cap else { return cap }
    // Below `cap` plus less than a second: no overflow.
    return min(whole.partialValue + UInt64(clamping: max(attoseconds, 0) / 1_000_000_000), cap)
  }
}
