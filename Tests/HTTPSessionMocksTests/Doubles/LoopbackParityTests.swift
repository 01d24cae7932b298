import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The same requests through a real `URLSession` against a loopback server and through a
/// ``URLSessionMock`` stubbed to say the same thing, compared field by field: status,
/// `Content-Type`, `Content-Length`, `expectedContentLength`, body, final URL and the error's
/// domain, code, failing URL (and its string) and description.
///
/// One Python `http.server` (`Fixtures/parity_server.py`) serves the whole suite on 127.0.0.1
/// at an ephemeral port; see ``PythonHTTPServer``. Every real request has a timeout; the only
/// real-time wait is the timeout case's (1 s on Linux, 0.5 s elsewhere), and the mock's timeout
/// runs on a ``VirtualClock``. Each test also checks the real answer against what the server is
/// known to send, so two sides that are wrong in the same way still fail.
@Suite(
  .enabled(
    if: PythonHTTPServer.isAvailable,
    "python3 is not on the PATH, so the loopback parity suite cannot start its server"),
  .pythonHTTPServer,
  .timeLimit(.minutes(1)))
struct LoopbackParityTests {
  /// What the server sends, byte for byte.
  static let plainBody = Data(#"{"login":"octocat","id":1}"#.utf8)
  static let headBody = "twelve bytes"
  static let missingBody = Data(#"{"message":"Not Found"}"#.utf8)

  #if canImport(FoundationNetworking)
    /// The shortest timeout that works on Linux: swift-corelibs-foundation arms its timer with
    /// `Int(timeoutInterval) * 1000` ms, so a 0.5 s timeout becomes 0 ms and fails the request
    /// at once (measured here: -1001 after about 40 ms, the server's answer 2 s away).
    static let timeout: TimeInterval = 1

    /// What corelibs' timeout error says: it is made with no user info (`HTTPURLProtocol`), so
    /// it has no failing URL and a generic description. Apple's URLSession, and the mock, give
    /// the URL, its string and "The request timed out.".
    static let corelibsTimeoutDescription =
      "The operation could not be completed. (NSURLErrorDomain error -1001.)"
    static let corelibsTimeoutGaps: [ParityObservation.Field: String] = [
      .failingURL: "corelibs' timeout error has no user info; Apple's and the mock's have it",
      .failingURLString: "corelibs' timeout error has no user info; Apple's and the mock's have it",
      .errorDescription: "corelibs says \"\(corelibsTimeoutDescription)\"",
    ]
  #else
    /// The timeout the issue's report used.
    static let timeout: TimeInterval = 0.5
  #endif

  private let server: PythonHTTPServer

  init() throws {
    server = try #require(PythonHTTPServer.current, "the .pythonHTTPServer trait starts the server")
  }

  /// A request for `path` on the server, tagged with `name` so the server can say what this
  /// case sent; every request has a timeout.
  private func request(
    _ path: String, method: String = "GET", case name: String, timeout: TimeInterval = 10
  ) -> URLRequest {
    var request = URLRequest(url: server.url(path))
    // Set by the setter, not the initializer: corelibs' URLSession only honours a request's
    // timeout that was assigned (the initializer's leaves the configuration's 60 s in force).
    request.timeoutInterval = timeout
    request.httpMethod = method
    request.setValue(name, forHTTPHeaderField: "X-Parity-Case")
    return request
  }

  /// Resumes a task for `request` on `session`, runs `meanwhile` with it, and waits for its
  /// one delivery.
  private func deliver(
    _ request: URLRequest, on session: some HTTPSession,
    meanwhile: (any HTTPDataTask) async -> Void = { _ in }
  ) async -> Deliveries.Delivery {
    let seen = Deliveries()
    let task = session.dataTask(with: request, completionHandler: seen.handler)
    task.resume()
    await meanwhile(task)
    return await seen.firstDelivery()
  }

  /// Sends `request` through a fresh real `URLSession` (ephemeral configuration).
  private func real(
    _ request: URLRequest, meanwhile: (any HTTPDataTask) async -> Void = { _ in }
  ) async -> Deliveries.Delivery {
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    return await deliver(request, on: session, meanwhile: meanwhile)
  }

  /// What the server saw from the case `name`: one "METHOD PATH" per request.
  private func serverLog(_ name: String) async throws -> [String] {
    let delivery = await real(request("/log?case=\(name)", case: "log"))
    let body = try #require(delivery.data, "the server's log: \(delivery)")
    return try JSONDecoder().decode([String].self, from: body)
  }

  // MARK: - Side by side

  @Test func aPlainGET() async throws {
    let request = request("/plain", case: "plain")
    let mock = URLSessionMock()
    mock.stub(
      .get("/plain"),
      with: .data(
        Self.plainBody, headers: ["Content-Type": "application/json", "X-Parity": "plain"]))

    let real = ParityObservation(await real(request))
    let mocked = ParityObservation(await deliver(request, on: mock))

    #expect(real.status == 200)
    #expect(real.body == Self.plainBody)
    #expect(real.parityHeader == "plain")
    #expect(real.contentLength == "\(Self.plainBody.count)")
    #expect(real.url == request.url?.absoluteString)
    ParityObservation.expectSame(real: real, mock: mocked, "GET /plain")
  }

  @Test func aHEADGetsTheHeadersAndNoBody() async throws {
    let request = request("/head", method: "HEAD", case: "head")
    let mock = URLSessionMock()
    mock.stub(.head("/head"), with: .text(Self.headBody))

    let real = ParityObservation(await real(request))
    let mocked = ParityObservation(await deliver(request, on: mock))

    #expect(real.status == 200)
    #expect(real.body?.isEmpty ?? true, "URLSession gives a HEAD no body")
    #expect(real.contentLength == "\(Self.headBody.utf8.count)")
    #expect(real.contentType == "text/plain; charset=utf-8")
    ParityObservation.expectSame(real: real, mock: mocked, "HEAD /head")
    #expect(try await serverLog("head") == ["HEAD /head"])
  }

  @Test func aRedirectIsFollowedToTheFinalAnswer() async throws {
    let request = request("/redirect", case: "redirect")
    let mock = URLSessionMock()
    mock.stub(.get("/redirect"), with: .status(302, headers: ["Location": "/plain"]))
    mock.stub(
      .get("/plain"),
      with: .data(
        Self.plainBody, headers: ["Content-Type": "application/json", "X-Parity": "plain"]))

    let real = ParityObservation(await real(request))
    let mocked = ParityObservation(await deliver(request, on: mock))

    #expect(real.status == 200)
    #expect(real.url == server.url("/plain").absoluteString)
    #expect(real.body == Self.plainBody)
    ParityObservation.expectSame(real: real, mock: mocked, "GET /redirect")
    let hops = try await serverLog("redirect")
    #expect(hops == ["GET /redirect", "GET /plain"])
    #expect(mock.requests.map { "\($0.httpMethod ?? "GET") \($0.url?.path ?? "")" } == hops)
  }

  @Test func anErrorStatusIsAnAnswerWithItsBody() async throws {
    let request = request("/missing", case: "missing")
    let mock = URLSessionMock()
    mock.stub(
      .get("/missing"),
      with: .data(Self.missingBody, status: 404, headers: ["Content-Type": "application/json"]))

    let real = ParityObservation(await real(request))
    let mocked = ParityObservation(await deliver(request, on: mock))

    #expect(real.status == 404)
    #expect(real.body == Self.missingBody)
    #expect(real.errorCode == nil, "an error status is not a transport error")
    ParityObservation.expectSame(real: real, mock: mocked, "GET /missing")
  }

  /// The real request really waits for its timeout (the server answers after 2 s); the mock's
  /// fails at exactly the timeout on the virtual clock.
  @Test func anAnswerLaterThanTheTimeoutFailsWithTimedOut() async throws {
    let request = request("/slow", case: "slow", timeout: Self.timeout)
    let timeout = Duration.seconds(Self.timeout)
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/slow"),
      with: StubResponse.data(Self.plainBody, headers: ["Content-Type": "application/json"])
        .delayed(by: .seconds(2)))

    let real = ParityObservation(await real(request))
    let mocked = ParityObservation(
      await deliver(request, on: mock) { _ in
        await clock.advance(by: timeout - .milliseconds(1))
        #expect(mock.exchanges.isEmpty, "nothing is delivered before the timeout")
        await clock.advance(by: .milliseconds(1))
      })

    #expect(real.errorDomain == NSURLErrorDomain)
    #expect(real.errorCode == NSURLErrorTimedOut)
    #expect(real.status == nil)
    #expect(clock.now == VirtualClock.Instant(offset: timeout))
    #expect(mocked.failingURL == request.url?.absoluteString)
    #expect(mocked.failingURLString == request.url?.absoluteString)
    #expect(mocked.errorDescription == "The request timed out.")
    #if canImport(FoundationNetworking)
      #expect(
        real.failingURL == nil && real.failingURLString == nil
          && real.errorDescription == Self.corelibsTimeoutDescription,
        "corelibs' timeout error carries details now: remove its known gaps")
      let gaps = Self.corelibsTimeoutGaps
    #else
      let gaps: [ParityObservation.Field: String] = [:]
    #endif
    ParityObservation.expectSame(
      real: real, mock: mocked, "GET /slow with a \(Self.timeout) s timeout", knownGaps: gaps)
  }

  /// The real request is cancelled once the server says it has arrived (and is being held);
  /// the mock's while its answer is still scheduled on the clock.
  @Test func aCancelledRequestFailsWithCancelled() async throws {
    let request = request("/hold", case: "cancel")
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/hold"), with: StubResponse.status(200).delayed(by: .seconds(5)))

    let real = ParityObservation(
      await real(request) { task in
        let arrived = await self.real(self.request("/arrived?case=cancel", case: "arrived"))
        #expect(arrived.statusCode == 200, "the server never saw /hold: \(arrived)")
        task.cancel()
      })
    let mocked = ParityObservation(
      await deliver(request, on: mock) { task in
        #expect(clock.pendingCount == 1, "the mock's answer is still scheduled")
        task.cancel()
      })

    #expect(real.errorDomain == NSURLErrorDomain)
    #expect(real.errorCode == NSURLErrorCancelled)
    #expect(real.failingURL == request.url?.absoluteString)
    #expect(real.status == nil)
    #expect(clock.pendingCount == 0, "the cancel took the mock's answer off the clock")
    ParityObservation.expectSame(real: real, mock: mocked, "GET /hold, cancelled")
  }
}
