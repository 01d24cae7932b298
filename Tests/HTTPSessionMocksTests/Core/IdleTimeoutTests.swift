import Foundation
import HTTPSessionKit
import TestSupport
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A request's timeout is an idle timer that every piece of data starts again, as in
/// URLSession; the resource timeout bounds the whole transfer. Injected and through the
/// URLProtocol bridge, on the mock's clock (the loopback server's side is in
/// `LongStreamServingTests`).
@Suite struct IdleTimeoutTests {
  private let url = URL(string: "https://api.example.com/ticks")!

  /// Events `1...count`, one every `interval`.
  private func ticks(_ count: Int, every interval: Duration) -> StubResponse {
    .events((1...count).map { ServerSentEvent(id: "\($0)", data: "\($0)") }, every: interval)
  }

  private func request(timeout: TimeInterval) -> URLRequest {
    var request = URLRequest(url: url)
    request.timeoutInterval = timeout
    return request
  }

  // MARK: - Injected

  @Test func aSteadyStreamNeverTripsAnIdleTimeoutThoughItLastsMinutes() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/ticks"), with: ticks(30, every: .seconds(10)))

    let (stream, _) = try await mock.stream(for: request(timeout: 30))
    let reader = Task { try await stream.events.reduce(into: [String]()) { $0.append($1.data) } }
    await clock.advance(by: .seconds(300))

    #expect(try await reader.value == (1...30).map(String.init))
    #expect(mock.exchanges.first?.error == nil)
    #expect(mock.exchanges.first?.pieces.count == 30)
  }

  @Test func aStreamQuietForLongerThanTheIdleTimeoutFailsThen() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    // Events at 10 and 20 s, then 40 s of silence before the third.
    mock.stub(
      .get("/ticks"),
      with: .events([
        .wait(.seconds(10)), .event(ServerSentEvent(data: "1")),
        .wait(.seconds(10)), .event(ServerSentEvent(data: "2")),
        .wait(.seconds(40)), .event(ServerSentEvent(data: "3")),
      ]))

    let (stream, _) = try await mock.stream(for: request(timeout: 30))
    let reader = Task { () -> (events: Int, error: URLError?) in
      var count = 0
      do {
        for try await _ in stream.events { count += 1 }
      } catch { return (count, error as? URLError) }
      return (count, nil)
    }
    await clock.advance(by: .seconds(49))
    #expect(mock.exchanges.isEmpty, "the idle timer, started again at 20 s, has 1 s to run")
    await clock.advance(by: .seconds(1))

    let (events, error) = await reader.value
    #expect(events == 2)
    #expect(error?.code == .timedOut)
    #expect(clock.pendingCount == 0)
  }

  @Test func theResourceTimeoutBoundsTheWholeTransfer() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.resourceTimeout = .seconds(65)
    mock.stub(.get("/ticks"), with: ticks(30, every: .seconds(10)))

    let (stream, _) = try await mock.stream(for: request(timeout: 30))
    let reader = Task { () -> (events: Int, error: URLError?) in
      var count = 0
      do {
        for try await _ in stream.events { count += 1 }
      } catch { return (count, error as? URLError) }
      return (count, nil)
    }
    await clock.advance(by: .seconds(300))

    let (events, error) = await reader.value
    #expect(events == 6)
    #expect(error?.code == .timedOut)
    #expect(mock.exchanges.first?.pieces.map(\.time).last == .seconds(60))
  }

  @Test func aWholeAnswerLaterThanTheResourceTimeoutTimesOutAtIt() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.resourceTimeout = .seconds(5)
    mock.stub(.any, with: StubResponse.text("late").delayed(by: .seconds(8)))
    let seen = Deliveries()

    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(5))

    #expect(seen.first?.urlError?.code == .timedOut)
  }

  @Test func anInfiniteOrZeroRequestTimeoutSetsNoLimit() async {
    for timeout in [TimeInterval.infinity, 0, -1, .nan] {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      mock.stub(.any, with: StubResponse.text("late").delayed(by: .seconds(600)))
      let seen = Deliveries()

      mock.dataTask(with: request(timeout: timeout), completionHandler: seen.handler).resume()
      await clock.advance(by: .seconds(600))

      #expect(seen.first?.data == Data("late".utf8), "timeout \(timeout)")
    }
  }

  // MARK: - Through the URLProtocol bridge

  @Test(.timeLimit(.minutes(1)))
  func aBridgedSessionsIdleTimeoutLetsASteadyStreamFinishWhole() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/ticks"), with: ticks(12, every: .seconds(10)))
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 30
    let session = mock.makeURLSession(configuration: configuration)
    defer { session.finishTasksAndInvalidate() }

    let call = Task { try await session.data(from: url) }
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(120))
    let (data, _) = try await call.value

    #expect(String(decoding: data, as: UTF8.self).hasSuffix("id: 12\ndata: 12\n\n"))
    #expect(mock.exchanges.first?.error == nil)
  }

  @Test(.timeLimit(.minutes(1)))
  func aBridgedSessionsConfigurationTimeoutsApplyOnTheClock() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/ticks"), with: ticks(12, every: .seconds(10)))
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 5
    let session = mock.makeURLSession(configuration: configuration)
    defer { session.finishTasksAndInvalidate() }

    let call = Task { try await session.data(from: url) }
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(5))
    let error = await #expect(throws: URLError.self) { try await call.value }

    #expect(error?.code == .timedOut)
    #expect(clock.now == VirtualClock.Instant(offset: .seconds(5)))
  }

  @Test(.timeLimit(.minutes(1)))
  func aBridgedConfigurationsResourceTimeoutBoundsTheTransfer() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/ticks"), with: ticks(12, every: .seconds(10)))
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForResource = 45
    let log = DelegateLog()
    let session = mock.makeURLSession(
      configuration: configuration, delegate: log, deliveringPiecesAsTheyCome: true)
    defer { session.finishTasksAndInvalidate() }

    session.dataTask(with: url).resume()
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(120))
    let error = await log.nextCompletion()

    #expect((error as? URLError)?.code == .timedOut)
    #expect(log.receivedPieces.count == 4, "the events at 10, 20, 30 and 40 s")
  }
}

/// A server-sent-events client written as real ones are, through the URLProtocol bridge: a
/// session with a data delegate gets each event when the clock releases it.
@Suite struct BridgedEventSourceTests {
  @Test(.timeLimit(.minutes(1)))
  func anEventSourceClientReadsEventsAsTheClockMovesAndResumesAfterTheStreamEnds() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    // Three events 30 s apart, then the connection drops.
    let first: [EventStreamStep] = (1...3).flatMap { tick -> [EventStreamStep] in
      [.wait(.seconds(30)), .event(ServerSentEvent(id: "\(tick)", data: "tick \(tick)"))]
    }
    let second = (4...5).map { ServerSentEvent(id: "\($0)", data: "tick \($0)") }
    mock.stub(.get("/feed"), with: .events(first + [.drop]))
    mock.stub(
      .get("/feed").header("Last-Event-ID", "3"), with: .events(second, every: .seconds(30)))
    let client = EventSourceClient(url: URL(string: "https://stream.example.com/feed")!)
    client.start { delegate in
      mock.makeURLSession(delegate: delegate, deliveringPiecesAsTheyCome: true)
    }
    defer { client.close() }

    try await mock.waitForRequests(count: 1)
    for count in 1...3 {
      await clock.advance(by: .seconds(30))
      await client.waitForEvents(count: count)
      #expect(client.events.count == count, "one event per step of the clock")
    }
    try await mock.waitForRequests(count: 2)
    for count in 4...5 {
      await clock.advance(by: .seconds(30))
      await client.waitForEvents(count: count)
    }

    #expect(client.events.map(\.data) == (1...5).map { "tick \($0)" })
    #expect(mock.requests[1].value(forHTTPHeaderField: "Last-Event-ID") == "3")
    #expect((client.ends.first as? URLError)?.code == .networkConnectionLost)
  }
}
