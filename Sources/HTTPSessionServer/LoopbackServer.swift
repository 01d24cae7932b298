import Foundation
import HTTPSessionMocksRuntime

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A real HTTP/1.1 server on the loopback interface that answers from a `URLSessionMock`.
///
/// For clients that cannot be handed a session: a `WKWebView`, an app under XCUITest in another
/// process, `curl`. Start one with `mock.startServer()` and point the client at ``baseURL``;
/// every request goes through the mock's one request path, so the same stubs answer, the journal
/// records it and `verify` checks it. A request no stub matches gets `404` with the near-miss
/// report as its body, and fails the test.
///
/// ```swift
/// let server = try mock.startServer()
/// defer { server.stop() }
/// app.launchEnvironment["API_BASE_URL"] = server.baseURL.absoluteString
/// ```
///
/// > Important: ``stop()`` closes every connection and returns only when no server thread can
/// > call into the mock any more. A server that is released stops itself.
///
/// > Important: Since iOS 17 and macOS 14, App Transport Security refuses an app plain HTTP to
/// > an IP address such as `127.0.0.1` by default: the app that loads from the server needs
/// > `NSAllowsLocalNetworking` in its `Info.plist`
/// > (<doc:ServingAMockOverLoopback#App-Transport-Security>).
///
/// ## Where reports go
///
/// Requests reach the server on its own threads, where no test is running, so the server keeps
/// the test its reports belong to: the one that started it, or the one that last called
/// ``reportToCurrentTest()``. Reading ``baseURL``, ``port`` or ``webSocketURL(for:)`` calls it
/// too, since a test reads the address just before it points a client at the server, inside the
/// `withKnownIssue` scope that expects a report. Outside a test, reports go to standard error.
///
/// <doc:ServingAMockOverLoopback> has what each answer looks like on the wire, the
/// ``ServerLimits``, the bounded journal and the `stub-server` command.
public final class LoopbackServer: Sendable {
  /// The server's address, such as `http://127.0.0.1:54321`; append paths to it.
  ///
  /// It names the host the server was started with: `http://localhost:54321` for
  /// `startServer(host: "localhost")`, `http://[::1]:54321` for `"::1"`.
  ///
  /// Reading it calls ``reportToCurrentTest()``: a request no stub matches fails the test, and
  /// the `withKnownIssue` scope, in which the address was last read (or, before that, the one
  /// that started the server). Read it inside the scope that expects the report, and again after
  /// the scope; give each test its own server:
  ///
  /// ```swift
  /// try await withKnownIssue {
  ///   _ = try await URLSession.shared.data(from: server.baseURL.appendingPathComponent("nope"))
  /// }
  /// ```
  public var baseURL: URL {
    context?.refresh()
    return address
  }
  /// The `ws://` address of `path` on this server, for a WebSocket client: such as
  /// `ws://127.0.0.1:54321/chat` for `"/chat"`.
  ///
  /// A stub's `StubResponse.webSocket(subprotocol:_:)` script answers the
  /// upgrade there. Like ``baseURL``, it calls ``reportToCurrentTest()``.
  public func webSocketURL(for path: String) -> URL {
    context?.refresh()
    var base = address.absoluteString
    if base.hasPrefix("http://") { base = "ws://" + base.dropFirst("http://".count) }
    while base.hasSuffix("/") { base.removeLast() }
    let relative = path.hasPrefix("/") ? path : "/" + path
    if let url = URL(string: base + relative) { return url }
    // A path with characters a URL cannot hold as they are: percent-encoded.
    let encoded = relative.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "/"
    return URL(string: base + encoded) ?? address
  }

  /// The TCP port the server listens on. Reading it, like reading ``baseURL``, calls
  /// ``reportToCurrentTest()``.
  public var port: Int {
    context?.refresh()
    return chosenPort
  }
  /// Sends the server's reports from now on to the test, and the `withKnownIssue` scope, that
  /// calls this: a request no stub matches, a failed expectation of the mock, a warning.
  ///
  /// Reading ``baseURL``, ``port`` or ``webSocketURL(for:)`` calls it, so a test that reads the
  /// address inside its `withKnownIssue` scope needs no other call. Call it yourself when the
  /// client already has the address, such as an app launched before the scope:
  ///
  /// ```swift
  /// try await withKnownIssue {
  ///   server.reportToCurrentTest()
  ///   try await tapRetry()  // the app asks for a path no stub matches
  /// }
  /// server.reportToCurrentTest()  // later reports belong to the test again
  /// ```
  ///
  /// Outside a test it does nothing: reports go to standard error.
  public func reportToCurrentTest() {
    context?.refresh()
  }

  private let address: URL
  private let chosenPort: Int
  private let context: ReportContext?
  /// The limits the server enforces.
  public let limits: ServerLimits
  private let listener: Listener

  init(
    handler: any ExchangeHandler, context: ReportContext? = nil, host: String, port: Int,
    limits: ServerLimits
  ) throws {
    guard (0...65_535).contains(port) else { throw ServerError.invalidPort(port) }
    let (address, urlHost) = try Self.loopbackAddress(host)
    let (fd, chosen) = try Socket.listen(on: address, port: port, backlog: 128)
    let base = "http://\(urlHost):\(chosen)"
    guard let url = URL(string: base) else {
      Socket.closeDescriptor(fd)
      throw ServerError.notLoopback(host)
    }
    do {
      listener = try Listener(fd: fd, limits: limits, handler: handler, baseURL: base)
    } catch {
      Socket.closeDescriptor(fd)
      throw error
    }
    self.address = url
    self.chosenPort = chosen
    self.limits = limits
    self.context = context
    context?.refresh()
    listener.start()
  }

  deinit {
    listener.stop()
    context?.close()
  }

  /// Stops the server: closes the listening socket and every connection, cancels the requests
  /// in progress, and returns once no server thread can call into the mock. Calling it again
  /// does nothing.
  public func stop() {
    listener.stop()
    context?.close()
  }

  /// The number of client connections open now.
  public var connectionCount: Int { listener.connectionCount }

  /// The number of file descriptors the server holds open now; 0 once ``stop()`` returned.
  package var openDescriptorCount: Int { listener.openDescriptorCount }

  /// Resolves `host` to a loopback address and the host that ``baseURL`` names, or throws:
  /// only `127.0.0.0/8`, `::1` and `localhost` are served. `localhost` binds `127.0.0.1` and
  /// stays `localhost` in ``baseURL``: a client handed a name may load what App Transport
  /// Security refuses from an IP address.
  static func loopbackAddress(_ host: String) throws -> (Socket.Address, String) {
    var name = host
    var urlHost: String?
    if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    if name.lowercased() == "localhost" { (name, urlHost) = ("127.0.0.1", "localhost") }
    var v4 = in_addr()
    if inet_pton(AF_INET, name, &v4) == 1 {
      let first = UInt32(bigEndian: v4.s_addr) >> 24
      guard first == 127 else { throw ServerError.notLoopback(host) }
      return (.v4(v4), urlHost ?? name)
    }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, name, &v6) == 1 {
      let bytes = withUnsafeBytes(of: v6) { Array($0) }
      guard bytes == [UInt8](repeating: 0, count: 15) + [1] else {
        throw ServerError.notLoopback(host)
      }
      return (.v6(v6), "[::1]")
    }
    throw ServerError.notLoopback(host)
  }
}
