import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Long-lived streams over the loopback server: a request that came over a socket has no
/// timeout of its own on the mock's clock (its client keeps its own), and a server-sent-events
/// client written as real ones are lives on the stream and reconnects with `Last-Event-ID`.
@Suite struct LongStreamServingTests {
  private func ticks(_ range: ClosedRange<Int>, every interval: Duration) -> StubResponse {
    .events(range.map { ServerSentEvent(id: "\($0)", data: "tick \($0)") }, every: interval)
  }

  @Test(.timeLimit(.minutes(1)))
  func aStreamLongerThanSixtySecondsOfTheClockReachesARealClient() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/ticks"), with: ticks(1...12, every: .seconds(10)))
    let server = try mock.startServer()
    defer { server.stop() }
    let session = liveSession()
    defer { session.finishTasksAndInvalidate() }

    let (stream, _) = try await session.stream(
      for: URLRequest(url: server.baseURL.appendingPathComponent("ticks")))
    var events = stream.events.makeAsyncIterator()
    for tick in 1...12 {
      await clock.advance(by: .seconds(10))
      #expect(try await events.next()?.data == "tick \(tick)", "at \(tick * 10) s")
    }
    #expect(try await events.next() == nil)
    #expect(mock.exchanges.first?.error == nil)
    #expect(mock.exchanges.first?.pieces.count == 12)
  }

  @Test(.timeLimit(.minutes(1)))
  func anEventSourceClientReadsEventsAsTheClockMovesAndResumesAfterTheStreamEnds() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    // Three events 30 s apart, then the connection drops mid-body.
    let first: [EventStreamStep] = (1...3).flatMap { tick -> [EventStreamStep] in
      [.wait(.seconds(30)), .event(ServerSentEvent(id: "\(tick)", data: "tick \(tick)"))]
    }
    mock.stub(.get("/feed"), with: .events(first + [.drop]))
    mock.stub(.get("/feed").header("Last-Event-ID", "3"), with: ticks(4...5, every: .seconds(30)))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = EventSourceClient(url: server.baseURL.appendingPathComponent("feed"))
    client.start { delegate in
      URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
    }
    defer { client.close() }

    try await mock.waitForRequests(count: 1)
    for count in 1...3 {
      await clock.advance(by: .seconds(30))
      await client.waitForEvents(count: count)
      #expect(client.events.count == count, "one event per step of the clock")
    }
    try await mock.waitForRequests(count: 2)  // the stream dropped: the client connected again
    for count in 4...5 {
      await clock.advance(by: .seconds(30))
      await client.waitForEvents(count: count)
    }

    #expect(client.events.map(\.data) == (1...5).map { "tick \($0)" })
    #expect(client.events.last?.id == "5")
    #expect(mock.requests[1].value(forHTTPHeaderField: "Last-Event-ID") == "3")
    #expect(mock.requests[1].value(forHTTPHeaderField: "Accept") == "text/event-stream")
    #expect(
      client.ends.first.map { $0 != nil } == true, "the first stream failed: its body was cut")
  }

  @Test(.timeLimit(.minutes(1)))
  func aStreamThatDropsIsAChunkedBodyCutShort() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/feed"),
      with: .events([.event(ServerSentEvent(data: "a")), .wait(.seconds(1)), .drop]))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /feed HTTP/1.1\r\nHost: a\r\n\r\n")

    #expect(client.readHead()?.headers["transfer-encoding"] == "chunked")
    #expect(client.readBodyChunk() == Array("data: a\n\n".utf8))
    await clock.advance(by: .seconds(1))

    #expect(client.readBodyChunk() == nil, "the connection closed before the last chunk")
    #expect((mock.exchanges.first?.error as? URLError)?.code == .networkConnectionLost)
  }

  /// The client's close reaches the mock on the server's connection thread, not the test's
  /// task: reading the journal right after the close, or advancing the clock before the close
  /// has reached the mock (which releases the next event into a connection already gone), races
  /// it. `waitForExchanges(count:)` is the hand-off.
  @Test(.timeLimit(.minutes(1)))
  func aClientThatClosesMidStreamIsRecordedAsHavingLeftAfterItsLastEvent() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/ticks"), with: ticks(1...10, every: .seconds(1)))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /ticks HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n\r\n")
    #expect(client.readHead()?.status == 200)
    try await mock.waitForRequests(count: 1)

    await clock.advance(by: .seconds(1))
    #expect(client.readBodyChunk() == Array("id: 1\ndata: tick 1\n\n".utf8))
    await clock.advance(by: .seconds(1))
    #expect(client.readBodyChunk() == Array("id: 2\ndata: tick 2\n\n".utf8))
    client.shutDown()  // the client leaves after the second event
    try await mock.waitForExchanges(count: 1)

    let exchange = try #require(mock.exchanges.first)
    #expect(exchange.endedByClient)
    #expect(exchange.pieces.count == 2, "it left after the second event")
    #expect((exchange.error as? URLError)?.code == .cancelled)
    await clock.advance(by: .seconds(8))
    #expect(mock.exchanges.count == 1)
    #expect(mock.exchanges.first?.pieces.count == 2, "nothing is released after the client left")
  }
}
