import Foundation
import HTTPSessionMocks

extension URLSessionMock {
  /// Starts a ``LoopbackServer`` that answers HTTP requests from this mock.
  ///
  /// ```swift
  /// let server = try mock.startServer()
  /// defer { server.stop() }
  /// let (data, _) = try await URLSession.shared.data(from: server.baseURL.appendingPathComponent("users/octocat"))
  /// ```
  ///
  /// - Parameters:
  ///   - port: The TCP port; 0 (the default) lets the system pick a free one.
  ///   - host: A loopback address: `127.0.0.1` (the default), another `127.x.y.z`, `::1` or
  ///     `localhost`. Any other host throws ``ServerError``, so a test never serves its stubs
  ///     to the network.
  ///   - limits: The limits on heads, bodies, connections and timeouts, and on this mock's
  ///     journal, which from now on keeps only the newest
  ///     ``ServerLimits/maxJournalExchanges`` requests (see ``ServerLimits``).
  /// - Throws: ``ServerError`` when the host is not loopback or the socket cannot be bound.
  public func startServer(
    port: Int = 0, host: String = "127.0.0.1", limits: ServerLimits = ServerLimits()
  ) throws -> LoopbackServer {
    let context = ReportContext()
    let server = try LoopbackServer(
      handler: MockExchangeHandler(mock: self, context: context), context: context, host: host,
      port: port, limits: limits)
    boundJournal(by: limits)
    return server
  }

  /// Starts a ``LoopbackServer`` like ``startServer(port:host:limits:)``, for the
  /// `stub-server` command.
  ///
  /// - Parameters:
  ///   - origin: When set, each request's scheme, host and port are replaced with this URL's
  ///     before the mock sees it, so that stubs recorded with absolute URLs
  ///     (`https://api.github.com/users/octocat`) answer requests to the server.
  ///   - observer: Called for each request once the mock has answered it, before the answer
  ///     is written (for a dribbled answer, before its last piece), on the connection's thread
  ///     or on the one that advanced the clock.
  package func startServer(
    port: Int = 0, host: String = "127.0.0.1", limits: ServerLimits = ServerLimits(),
    origin: URLComponents? = nil, observer: (@Sendable (ServedRequest) -> Void)?
  ) throws -> LoopbackServer {
    let context = ReportContext()
    let server = try LoopbackServer(
      handler: MockExchangeHandler(
        mock: self, origin: origin, observer: observer, context: context),
      context: context, host: host, port: port, limits: limits)
    boundJournal(by: limits)
    return server
  }

  /// A served mock runs for as long as its clients do: its journal keeps the newest exchanges.
  private func boundJournal(by limits: ServerLimits) {
    boundJournal(toLast: limits.maxJournalExchanges, bodyBytes: limits.maxJournalBodyBytes)
  }
}
