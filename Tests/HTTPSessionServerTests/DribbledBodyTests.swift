import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A dribbled stub over the loopback server: chunked transfer encoding, one chunk each time the
/// test moves the clock to the next piece.
@Suite struct DribbledBodyTests {
  private let payload = Data((0..<1000).map { UInt8($0 % 251) })

  private func dribbledMock(
    _ body: Data? = nil, over duration: Duration = .seconds(4), on clock: VirtualClock
  ) -> URLSessionMock {
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/download"), with: .data(body ?? payload).dribbled(inChunks: 4, over: duration))
    mock.stub(.get("/plain"), with: .text("plain"))
    return mock
  }

  @Test func eachPieceIsWrittenAsAChunkWhenTheClockReachesIt() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = dribbledMock(on: clock)
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /download HTTP/1.1\r\nHost: a\r\n\r\n")

    let head = try #require(client.readHead())
    #expect(head.status == 200)
    #expect(head.headers["transfer-encoding"] == "chunked")
    #expect(head.headers["content-length"] == nil)
    var received: [UInt8] = []
    for second in 1...4 {
      // Nothing of the next piece is on the wire before the clock reaches it.
      #expect(client.bufferedByteCount == 0, "before \(second) s")
      await clock.advance(by: .seconds(1))
      let chunk = try #require(client.readBodyChunk(), "at \(second) s")
      #expect(chunk.count == 250, "at \(second) s")
      received += chunk
    }
    #expect(client.readBodyChunk() == [], "the last, empty chunk ends the body")
    #expect(Data(received) == payload)

    // The framing was right: the connection carries the next request.
    client.send("GET /plain HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(client.readResponse()?.body == "plain")
    #expect(mock.requests.count == 2)
  }

  @Test func anHTTP10ClientGetsThePiecesUnframedAndTheConnectionCloses() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = dribbledMock(on: clock)
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /download HTTP/1.0\r\nHost: a\r\n\r\n")

    let head = try #require(client.readHead())
    #expect(head.headers["transfer-encoding"] == nil)
    #expect(head.headers["content-length"] == nil)
    #expect(head.headers["connection"] == "close")
    await clock.advance(by: .seconds(1))
    #expect(client.readBytes(250) == Array(payload.prefix(250)))
    await clock.advance(by: .seconds(3))

    #expect(client.readBytes(750) == Array(payload.dropFirst(250)))
    #expect(client.closedWithoutData())
  }

  @Test func aStreamCutByTheResourceTimeoutClosesTheConnectionWithTheBodyIncomplete() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    // The server's requests have no request timeout of their own; the mock's resource timeout
    // bounds them: the pieces are due at 30, 60, 90 and 120 s, so the stream fails after the
    // second.
    let mock = dribbledMock(over: .seconds(120), on: clock)
    mock.resourceTimeout = .seconds(60)
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /download HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(client.readHead()?.headers["transfer-encoding"] == "chunked")

    await clock.advance(by: .seconds(60))

    #expect(client.readBodyChunk()?.count == 250)
    #expect(client.readBodyChunk()?.count == 250)
    #expect(client.readBodyChunk() == nil, "closed without the last chunk")
    #expect(
      mock.events.last?.description.hasPrefix("#1 completed with error: URLError(.timedOut)")
        == true)
  }

  @Test func stoppingTheServerMidStreamCancelsTheExchange() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = dribbledMock(on: clock)
    let server = try mock.startServer()
    let client = try RawClient(port: server.port)
    client.send("GET /download HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(client.readHead() != nil)
    await clock.advance(by: .seconds(1))
    #expect(client.readBodyChunk()?.count == 250)

    server.stop()

    #expect(mock.events.contains { $0.kind == .cancelled })
    #expect(clock.pendingCount == 0)
    await clock.advance(by: .seconds(3))
    #expect(client.closedWithoutData())
  }

  @Test func aRealURLSessionGetsTheWholeBody() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = dribbledMock(on: clock)
    let server = try mock.startServer()
    defer { server.stop() }
    let url = server.baseURL.appendingPathComponent("download")

    let call = Task { try await liveSession().data(from: url) }
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(4))
    let (data, response) = try await call.value

    #expect(data == payload)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
  }

  @Test(.enabled(if: installed("curl") != nil, "curl is not installed (apt-get install curl)"))
  func curlReadsTheChunkedBody() async throws {
    let curl = try #require(installed("curl"))
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let text = String(repeating: "dribble ", count: 64)
    let mock = dribbledMock(Data(text.utf8), on: clock)
    let server = try mock.startServer()
    defer { server.stop() }
    // A generous limit: in a full parallel run, tests that block the cooperative pool's
    // threads can hold this test back for many seconds before it advances the clock.
    // Output to files, not the child's standard output, which reading to its end would tie to
    // every process that shares it.
    let folder = try TemporaryFolder("dribble-curl")
    let (headFile, bodyFile) = (
      folder.appendingPathComponent("head"), folder.appendingPathComponent("body")
    )
    let process = try ChildProcess(
      URL(fileURLWithPath: curl),
      [
        "-s", "--max-time", "120", "-D", headFile.path, "-o", bodyFile.path,
        "\(server.baseURL)/download",
      ], environment: ProcessInfo.processInfo.environment)
    defer { process.stop() }

    try await mock.waitForRequests(count: 1)
    for _ in 1...4 { await clock.advance(by: .seconds(1)) }
    let status = await process.exit(timeout: 150)

    let state = "events: \(mock.events.map(\.description)), pending: \(clock.pendingCount)"
    #expect(status == 0, "\(state)")
    let head = String(decoding: (try? Data(contentsOf: headFile)) ?? Data(), as: UTF8.self)
    #expect(head.lowercased().contains("transfer-encoding: chunked"), "\(head)")
    #expect((try? Data(contentsOf: bodyFile)) == Data(text.utf8), "\(state)")
  }
}
