import Foundation
import HTTPSessionKit
import TestSupport
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `.events(_:)` with steps (comments, retry, raw lines, waits, a drop), `truncated(after:)`,
/// and what the exchange records when the client leaves.
@Suite struct EventStreamStepTests {
  private let url = URL(string: "https://stream.example.com/feed")!

  @Test func eachStepIsWrittenAsAServerWritesIt() {
    #expect(EventStreamStep.comment("heartbeat").description == #"": heartbeat\n""#)
    #expect(EventStreamStep.comment().description == #"":\n""#)
    #expect(EventStreamStep.retry(.milliseconds(2500)).description == #""retry: 2500\n\n""#)
    #expect(EventStreamStep.raw("x: y\r\n").description == #""x: y\r\n""#)
  }

  @Test func stepsArriveAtTheirOwnTimesOnTheClock() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/feed"),
      with: .events([
        .retry(.seconds(3)), .event(ServerSentEvent(id: "1", data: "a")),
        .wait(.seconds(20)), .comment("heartbeat"),
        .wait(.seconds(5)), .raw("event: price\ndata: 42\n\n"),
      ]))
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .injected, to: sink)
    #expect(sink.steps.count == 2, "the head and the first piece at once")
    await clock.advance(by: .seconds(19))
    #expect(sink.steps.count == 2)
    await clock.advance(by: .seconds(1))
    #expect(sink.steps.count == 3, "the heartbeat at 20 s")
    await clock.advance(by: .seconds(5))

    #expect(sink.steps.last == "finish complete")
    let text = String(decoding: sink.body, as: UTF8.self)
    #expect(text == "retry: 3000\n\nid: 1\ndata: a\n\n: heartbeat\nevent: price\ndata: 42\n\n")
    #expect(mock.exchanges.first?.pieces.map(\.time) == [.zero, .seconds(20), .seconds(25)])
  }

  @Test func heartbeatsKeepAQuietStreamInsideItsIdleTimeout() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    let beat: [EventStreamStep] = [.wait(.seconds(20)), .comment()]
    mock.stub(
      .get("/feed"),
      with: .events(Array(Array(repeating: beat, count: 6).joined()) + [.wait(.seconds(40))]))
    var request = URLRequest(url: url)
    request.timeoutInterval = 30
    let seen = Deliveries()

    mock.dataTask(with: request, completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(300))

    // Six heartbeats over 120 s keep it alive; the 40 s of silence after them do not.
    #expect(seen.first?.urlError?.code == .timedOut)
    #expect(mock.exchanges.first?.pieces.count == 6)
    #expect(clock.now == VirtualClock.Instant(offset: .seconds(300)))
  }

  @Test func aStreamThatDropsFailsWithNetworkConnectionLostAfterItsEvents() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/feed"),
      with: .events([
        .event(ServerSentEvent(id: "1", data: "a")), .wait(.seconds(1)),
        .event(ServerSentEvent(id: "2", data: "b")), .drop,
        .event(ServerSentEvent(id: "3", data: "never")),
      ]))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    let reader = Task { () -> ([String], URLError?) in
      var seen: [String] = []
      do {
        for try await event in stream.events { seen.append(event.data) }
      } catch { return (seen, error as? URLError) }
      return (seen, nil)
    }
    await clock.advance(by: .seconds(1))

    let (events, error) = await reader.value
    #expect(events == ["a", "b"])
    #expect(error?.code == .networkConnectionLost)
    #expect(mock.exchanges.first?.pieces.count == 2)
  }

  @Test func aTruncatedBodyDeliversItsFirstBytesThenDrops() async throws {
    let mock = URLSessionMock()
    let payload = Data((0..<100).map { UInt8($0) })
    mock.stub(.get("/file"), with: StubResponse.data(payload).truncated(after: 40))
    let sink = RecordingSink()

    mock.send(
      URLRequest(url: URL(string: "https://x.test/file")!), kind: .data, door: .injected, to: sink
    )

    #expect(sink.body == payload.prefix(40))
    #expect(sink.steps.last?.hasPrefix("finish failed") == true)
    #expect((mock.exchanges.first?.error as? URLError)?.code == .networkConnectionLost)
    #expect(sink.response?.value(forHTTPHeaderField: "Content-Length") == "100")
  }

  @Test func aTruncatedDribbleIsCutWhereItsPiecesReachTheCount() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    let payload = Data(repeating: 7, count: 100)
    mock.stub(
      .get("/file"),
      with: StubResponse.data(payload).dribbled(inChunks: 4, over: .seconds(4)).truncated(after: 60)
    )
    let sink = RecordingSink()

    mock.send(
      URLRequest(url: URL(string: "https://x.test/file")!), kind: .data, door: .injected, to: sink
    )
    await clock.advance(by: .seconds(4))

    #expect(
      sink.steps.prefix(4) == ["response 200", "body 25 bytes", "body 25 bytes", "body 10 bytes"])
    #expect(sink.steps.count == 5)
    #expect(sink.steps.last?.hasPrefix("finish failed") == true)
    #expect(sink.body.count == 60)
    #expect(mock.exchanges.first?.pieces.map(\.time) == [.seconds(1), .seconds(2), .seconds(3)])
  }

  @Test func theExchangeRecordsThatTheClientLeftAndAfterWhichPiece() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/feed"),
      with: .events((1...10).map { ServerSentEvent(data: "\($0)") }, every: .seconds(1)))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    let reader = Task { () -> Int in
      var count = 0
      for try await _ in stream.events {
        count += 1
        if count == 3 { break }
      }
      return count
    }
    await clock.advance(by: .seconds(3))
    #expect(try await reader.value == 3)
    await clock.advance(by: .seconds(7))

    let exchange = try #require(mock.exchanges.first)
    #expect(exchange.endedByClient)
    #expect(exchange.pieces.count == 3)
    #expect((exchange.error as? URLError)?.code == .cancelled)
  }

  @Test func aStubsOwnCancelledErrorIsNotTheClients() {
    let mock = URLSessionMock()
    mock.stub(.any, with: .error(URLError(.cancelled)))
    mock.dataTask(with: url) { _, _, _ in }.resume()

    #expect(mock.exchanges.first?.endedByClient == false)
  }

  @Test(.timeLimit(.minutes(1)))
  func aBridgedStreamThatDropsFailsTheDelegatesTask() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/feed"),
      with: .events([.event(ServerSentEvent(data: "a")), .wait(.seconds(1)), .drop]))
    let log = DelegateLog()
    let session = mock.makeURLSession(delegate: log, deliveringPiecesAsTheyCome: true)
    defer { session.finishTasksAndInvalidate() }

    session.dataTask(with: url).resume()
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(1))
    let error = await log.nextCompletion()

    #expect((error as? URLError)?.code == .networkConnectionLost)
    #expect(log.receivedPieces == [Data("data: a\n\n".utf8)])
  }
}

/// A bundle file cannot say a stream's steps or a truncation: writing one is refused, naming
/// it, rather than losing it.
@Suite struct EventStreamStepStorageTests {
  @Test(arguments: [
    StubResponse.events([.event(ServerSentEvent(data: "a")), .drop]),
    StubResponse.text("abc").truncated(after: 1),
  ])
  func everyWriterRefusesStepsAndTruncationNamingThem(response: StubResponse) throws {
    var bundle = MockBundle()
    _ = withCapturedReports { bundle.stub(.get("/a"), with: response) }
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }

    let ours = bundleError { try bundle.write(to: folder.appendingPathComponent("ours")) }
    let wireMock = bundleError {
      try bundle.write(to: folder.appendingPathComponent("wm"), format: .wireMock)
    }

    #expect(ours?.kind == .unstorable)
    #expect(wireMock?.kind == .unstorable)
    #expect(
      ours?.description.contains("truncated") == true || ours?.description.contains("steps") == true
    )
  }
}
