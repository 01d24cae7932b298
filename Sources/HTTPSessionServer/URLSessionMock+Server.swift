import Foundation
import HTTPSessionMocksRuntime

extension URLSessionMock {
  /// Starts a ``LoopbackServer`` that answers HTTP requests from this mock.
  ///
  /// ```swift
  /// let server = try mock.startServer()
  /// defer { server.stop() }
  /// let (data, _) = try await URLSession.shared.data(from: server.baseURL.appendingPathComponent("users/octocat"))
  /// ```
  ///
  /// Stubs with absolute URLs, such as a HAR file's, answer over loopback when the server
  /// answers as their origin:
  ///
  /// ```swift
  /// let mock = try URLSessionMock(bundle: MockBundle(contentsOf: harFile))
  /// let server = try mock.startServer(origin: URL(string: "https://api.example.com")!)
  /// // GET http://127.0.0.1:PORT/users/octocat is matched as GET https://api.example.com/users/octocat
  /// ```
  ///
  /// - Parameters:
  ///   - port: The TCP port; 0 (the default) lets the system pick a free one.
  ///   - host: A loopback address: `127.0.0.1` (the default), another `127.x.y.z`, `::1` or
  ///     `localhost`. Any other host throws ``ServerError``, so a test never serves its stubs
  ///     to the network. `localhost` binds `127.0.0.1` and stays `localhost` in
  ///     ``LoopbackServer/baseURL``, for a client that should be handed a name rather than an
  ///     IP address (<doc:ServingAMockOverLoopback#App-Transport-Security>).
  ///   - limits: The limits on heads, bodies, connections and timeouts, and on this mock's
  ///     journal, which from now on keeps only the newest
  ///     ``ServerLimits/maxJournalExchanges`` requests (see ``ServerLimits``).
  ///   - origin: When set, each request's scheme, host and port are replaced with this URL's
  ///     before the mock sees it (the journal records the request as the mock saw it), so that
  ///     stubs written or recorded with absolute URLs answer requests to the server. An `http`
  ///     or `https` URL with a host and nothing after its port.
  ///   - admin: Whether the server also answers WireMock's admin API under `/__admin`
  ///     (listing and counting requests, adding mappings, scenarios, waiting for a request:
  ///     <doc:ServingAMockOverLoopback> lists the endpoints). Admin requests are answered
  ///     before the mock sees them, so they are not in its journal. Off by default.
  ///   - templatingAdminMappings: Whether every mapping added through the admin API
  ///     (`POST /__admin/mappings`, `PUT`, `import`) is a response template, as WireMock's
  ///     `--global-response-templating` makes every mapping one; off by default, when a mapping
  ///     is a template only if it names the `response-template` transformer. The mock's own
  ///     stubs are templates where they are written: `StubResponse.templated(seed:)`, or
  ///     `MockBundle.templatingEveryResponse()` for a whole bundle. Without `admin` there
  ///     are no such mappings, and it does nothing.
  ///
  ///     ```swift
  ///     let mock = URLSessionMock(bundle: try MockBundle(contentsOf: root).templatingEveryResponse())
  ///     let server = try mock.startServer(admin: true, templatingAdminMappings: true)
  ///     ```
  /// - Throws: ``ServerError`` when the host is not loopback, the origin is not an origin, or
  ///   the socket cannot be bound.
  public func startServer(
    port: Int = 0, host: String = "127.0.0.1", limits: ServerLimits = ServerLimits(),
    origin: URL? = nil, admin: Bool = false, templatingAdminMappings: Bool = false
  ) throws -> LoopbackServer {
    try startServer(
      port: port, host: host, limits: limits, origin: origin,
      admin: admin ? AdminSettings(templatesEveryResponse: templatingAdminMappings) : nil,
      observer: nil)
  }

  /// Starts a ``LoopbackServer`` like ``startServer(port:host:limits:origin:admin:templatingAdminMappings:)``, and
  /// calls `observer` for each request (the `stub-server` command's log).
  ///
  /// - Parameters:
  ///   - admin: The admin API's settings, or `nil` for no admin API.
  ///   - observer: Called for each request once the mock has answered it, before the answer
  ///     is written (for a dribbled answer, before its last piece), on the connection's thread
  ///     or on the one that advanced the clock. Admin requests are not observed.
  package func startServer(
    port: Int = 0, host: String = "127.0.0.1", limits: ServerLimits = ServerLimits(),
    origin: URL? = nil, admin: AdminSettings? = nil,
    observer: (@Sendable (ServedRequest) -> Void)?
  ) throws -> LoopbackServer {
    var components: URLComponents?
    if let origin {
      guard let parts = URLComponents(url: origin, resolvingAgainstBaseURL: false),
        ["http", "https"].contains(parts.scheme?.lowercased() ?? ""),
        let host = parts.host, !host.isEmpty, parts.path.isEmpty || parts.path == "/",
        parts.query == nil, parts.fragment == nil, parts.user == nil, parts.password == nil
      else { throw ServerError.invalidOrigin(origin) }
      components = parts
    }
    let context = ReportContext()
    let handler = MockExchangeHandler(
      mock: self, origin: components, observer: observer, context: context)
    guard let admin else {
      let server = try LoopbackServer(
        handler: handler, context: context, host: host, port: port, limits: limits)
      boundJournal(by: limits)
      return server
    }
    let api = AdminAPI(mock: self, settings: admin, journalLimit: limits.maxJournalExchanges)
    let server = try LoopbackServer(
      handler: AdminExchangeHandler(mock: handler, admin: api), context: context, host: host,
      port: port, limits: limits)
    api.stopsServer { [weak server] in server?.stop() }
    boundJournal(by: limits)
    return server
  }

  /// A served mock runs for as long as its clients do: its journal keeps the newest exchanges.
  /// It also matches under the server's budget.
  private func boundJournal(by limits: ServerLimits) {
    boundJournal(toLast: limits.maxJournalExchanges, bodyBytes: limits.maxJournalBodyBytes)
    limitMatching(
      MatchLimits(
        maxDuration: limits.maxMatchDuration, maxJSONPathValues: limits.maxJSONPathValues))
  }
}
