import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `StubResponse.dribbled(inChunks:over:)`: the core sends the head at the answer's time, then
/// the body in pieces on the clock; the injected door hands the whole body over at the end.
@Suite struct DribbledResponseTests {
  private let url = URL(string: "https://api.example.com/download")!
  private let payload = Data((0..<1000).map { UInt8($0 % 251) })

  private func dribbledMock(
    _ response: StubResponse? = nil, chunks: Int = 4, over duration: Duration = .seconds(4),
    on clock: VirtualClock
  ) -> URLSessionMock {
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .any, with: (response ?? .data(payload)).dribbled(inChunks: chunks, over: duration))
    return mock
  }

  // MARK: - The seam: head, pieces, end on the clock

  @Test func theSinkGetsTheHeadAtOnceThenOnePieceAtEachStep() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let sink = RecordingSink()

    let task = mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    #expect(sink.steps == ["response 200"])
    #expect(sink.response?.value(forHTTPHeaderField: "Content-Length") == "1000")
    for second in 1...3 {
      await clock.advance(by: .seconds(1))
      #expect(sink.steps.count == 1 + second, "after \(second) s")
      #expect(sink.steps.last == "body 250 bytes", "after \(second) s")
    }
    await clock.advance(by: .seconds(1))

    #expect(sink.steps.suffix(2) == ["body 250 bytes", "finish complete"])
    #expect(sink.body == payload)
    #expect(task.state == .completed)
    #expect(clock.pendingCount == 0)
    #expect(mock.exchanges.first?.body == payload, "the exchange keeps the whole body")
  }

  @Test func theEndFollowsTheLastPieceAtTheSameInstant() async {
    let clock = VirtualClock()
    let mock = dribbledMock(chunks: 2, over: .seconds(2), on: clock)
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    await clock.advance(by: .seconds(2))

    #expect(
      sink.steps == ["response 200", "body 500 bytes", "body 500 bytes", "finish complete"])
  }

  @Test func aDelayComesBeforeTheHeadAndThePiecesFollowIt() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .any,
      with: StubResponse.data(payload).delayed(by: .seconds(10)).dribbled(
        inChunks: 2, over: .seconds(2)))
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    await clock.advance(by: .seconds(9))
    #expect(sink.steps.isEmpty)
    await clock.advance(by: .seconds(1))
    #expect(sink.steps == ["response 200"])
    await clock.advance(by: .seconds(1))
    #expect(sink.steps == ["response 200", "body 500 bytes"])
    await clock.advance(by: .seconds(1))

    #expect(
      sink.steps == ["response 200", "body 500 bytes", "body 500 bytes", "finish complete"])
  }

  @Test func piecesDifferInSizeByAtMostOneByteAndAddUpToTheBody() async {
    let clock = VirtualClock()
    let mock = dribbledMock(.data(Data(payload.prefix(10))), chunks: 3, on: clock)
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    await clock.run()

    #expect(
      sink.steps.filter { $0.hasPrefix("body") } == [
        "body 4 bytes", "body 3 bytes", "body 3 bytes",
      ])
    #expect(sink.body == payload.prefix(10))
  }

  @Test func moreChunksThanBytesSendsOneByteAPieceOverTheWholeDuration() async {
    let clock = VirtualClock()
    let mock = dribbledMock(.text("abc"), chunks: 10, over: .seconds(3), on: clock)
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    await clock.advance(by: .seconds(2))
    #expect(sink.steps == ["response 200", "body 1 bytes", "body 1 bytes"])
    await clock.advance(by: .seconds(1))

    #expect(
      sink.steps == [
        "response 200", "body 1 bytes", "body 1 bytes", "body 1 bytes", "finish complete",
      ])
    #expect(sink.body == Data("abc".utf8))
  }

  @Test func aZeroDurationSendsEveryPieceAtOnce() {
    let clock = VirtualClock()
    let mock = dribbledMock(chunks: 4, over: .zero, on: clock)
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)

    #expect(
      sink.steps == ["response 200"] + Array(repeating: "body 250 bytes", count: 4) + [
        "finish complete"
      ])
    #expect(clock.pendingCount == 0)
  }

  @Test func anEmptyBodyOrAHeadRequestArrivesWholeWithNothingToDribble() {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/empty"), with: StubResponse.status(204).dribbled(inChunks: 4, over: .seconds(4)))
    mock.stub(
      .head("/download"), with: StubResponse.data(payload).dribbled(inChunks: 4, over: .seconds(4)))
    let empty = RecordingSink()
    let head = RecordingSink()
    var request = URLRequest(url: url)
    request.httpMethod = "HEAD"

    mock.send(
      URLRequest(url: URL(string: "https://api.example.com/empty")!), kind: .data, door: .server,
      to: empty)
    mock.send(request, kind: .data, door: .server, to: head)

    #expect(empty.steps == ["response 204", "body 0 bytes", "finish complete"])
    #expect(head.steps == ["response 200", "body 0 bytes", "finish complete"])
    #expect(head.response?.value(forHTTPHeaderField: "Content-Length") == "1000")
    #expect(clock.pendingCount == 0)
  }

  @Test func anErrorAnswerIsNotDribbled() {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .any,
      with: StubResponse.error(URLError(.networkConnectionLost)).dribbled(
        inChunks: 4, over: .seconds(4)))
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)

    #expect(sink.steps == ["finish failed networkConnectionLost"])
  }

  @Test func waitForRequestsWakesOnceTheHeadIsScheduled() async throws {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let sink = RecordingSink()

    let call = Task { mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink) }
    try await mock.waitForRequests(count: 1)
    _ = await call.value
    await clock.advance(by: .seconds(4))

    #expect(sink.steps.last == "finish complete")
  }

  // MARK: - The injected door: the whole body at the end

  @Test func aCompletionHandlerGetsTheWholeBodyWhenTheDurationIsOver() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let seen = Deliveries()

    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(3))
    #expect(seen.count == 0)
    await clock.advance(by: .seconds(1))

    #expect(seen.count == 1)
    #expect(seen.first?.data == payload)
    #expect(seen.first?.statusCode == 200)
    #expect(seen.first?.error == nil)
  }

  @Test func theAsyncFormReturnsTheWholeBodyWhenTheDurationIsOver() async throws {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let url = url

    let call = Task { try await mock.data(from: url) }
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(4))
    let (data, response) = try await call.value

    #expect(data == payload)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
  }

  @Test func aDownloadWritesTheWholeBodyToItsFileAtTheEnd() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let seen = Deliveries()

    mock.downloadTask(with: URLRequest(url: url), completionHandler: seen.fileHandler).resume()
    await clock.advance(by: .seconds(3))
    #expect(seen.count == 0)
    await clock.advance(by: .seconds(1))

    #expect(seen.count == 1)
    #expect(seen.first?.fileContents == payload)
    #expect(seen.first?.error == nil)
  }

  @Test func theAsyncDownloadReturnsAFileWithTheWholeBody() async throws {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let url = url

    let call = Task { try await mock.download(for: URLRequest(url: url)) }
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(4))
    let (file, _) = try await call.value
    defer { try? FileManager.default.removeItem(at: file) }

    #expect(try Data(contentsOf: file) == payload)
  }

  // MARK: - Cancellation

  @Test func cancelMidDribbleEndsTheSinkWithCancelledAndNothingAfter() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let sink = RecordingSink()

    let task = mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    await clock.advance(by: .seconds(2))
    task.cancel()
    #expect(
      sink.steps == ["response 200", "body 250 bytes", "body 250 bytes", "finish failed cancelled"])
    #expect(clock.pendingCount == 0)
    await clock.advance(by: .seconds(10))

    #expect(sink.steps.count == 4)
    #expect(task.state == .completed)
    #expect(mock.events.map(\.kind).contains(.cancelled))
    #expect(mock.events.map(\.description).last == "#1 completed with error: URLError(.cancelled)")
  }

  @Test func cancelFromTheSinkWhileItHoldsAPieceEndsTheStreamThere() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let sink = CancellingSink(afterPieces: 2)

    let task = mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    sink.task.withLock { $0 = task }
    await clock.advance(by: .seconds(4))

    #expect(sink.log.current == ["head", "piece", "piece", "end cancelled"])
    #expect(clock.pendingCount == 0)
  }

  @Test func aCompletionHandlerCancelledMidDribbleGetsCancelledAndNoBody() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let seen = Deliveries()

    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    await clock.advance(by: .seconds(1))
    task.cancel()
    await clock.advance(by: .seconds(3))

    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .cancelled)
    #expect(seen.first?.data == nil)
  }

  @Test func cancellingTheAwaitingTaskMidDribbleThrowsCancelled() async throws {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let url = url

    let call = Task { try await mock.data(from: url) }
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(2))
    call.cancel()
    let result = await call.result

    #expect(throws: URLError.self) { try result.get() }
    #expect((result.failureError as? URLError)?.code == .cancelled)
    #expect(clock.pendingCount == 0)
  }

  // MARK: - Time limits

  @Test func theRequestTimeoutIsAnIdleTimerThatEachPieceStartsAgain() async {
    let clock = VirtualClock()
    let mock = dribbledMock(chunks: 4, over: .seconds(12), on: clock)
    let sink = RecordingSink()
    var request = URLRequest(url: url)
    request.timeoutInterval = 3.5

    mock.send(request, kind: .data, door: .injected, to: sink)
    await clock.advance(by: .seconds(12))

    #expect(sink.steps.count == 6, "the head, 4 pieces 3 s apart, the end")
    #expect(sink.steps.last == "finish complete")
    #expect(sink.body == payload)
  }

  @Test func aGapLongerThanTheRequestTimeoutFailsTheStreamThen() async {
    let clock = VirtualClock()
    let mock = dribbledMock(chunks: 4, over: .seconds(12), on: clock)
    let sink = RecordingSink()
    var request = URLRequest(url: url)
    request.timeoutInterval = 2.5

    mock.send(request, kind: .data, door: .injected, to: sink)
    await clock.advance(by: .seconds(2))
    #expect(sink.steps == ["response 200"])
    await clock.advance(by: .milliseconds(500))
    #expect(sink.steps.count == 2)
    #expect(sink.steps.last?.hasPrefix("finish failed") == true)
    await clock.advance(by: .seconds(10))

    #expect(sink.steps.count == 2)
    #expect(
      mock.events.map(\.description).last?.hasPrefix("#1 completed with error: URLError(.timedOut)")
        == true)
  }

  @Test func aRequestOverTheLoopbackServerHasNoTimeoutOfItsOwn() async {
    let clock = VirtualClock()
    let mock = dribbledMock(chunks: 4, over: .seconds(400), on: clock)
    let sink = RecordingSink()

    // The server builds its URLRequest with Foundation's default 60 s, which no client sent.
    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)
    await clock.advance(by: .seconds(400))

    #expect(sink.steps.last == "finish complete")
    #expect(sink.body == payload)
  }

  @Test func aCompletionHandlerTimedOutMidDribbleGetsTheResponseAndNoBody() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let seen = Deliveries()
    var request = URLRequest(url: url)
    request.timeoutInterval = 0.5

    mock.dataTask(with: request, completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(3))

    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .timedOut)
    #expect(seen.first?.data == nil)
  }

  @Test func aPieceExactlyAtTheTimeoutArrives() async {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    let seen = Deliveries()
    var request = URLRequest(url: url)
    request.timeoutInterval = 1

    mock.dataTask(with: request, completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(4))

    #expect(seen.first?.data == payload)
    #expect(seen.first?.error == nil)
  }

  @Test func aDelayBeyondTheTimeoutTimesOutBeforeTheHead() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .any,
      with: StubResponse.data(payload).delayed(by: .seconds(5)).dribbled(
        inChunks: 4, over: .seconds(4)))
    let sink = RecordingSink()
    var request = URLRequest(url: url)
    request.timeoutInterval = 3

    mock.send(request, kind: .data, door: .injected, to: sink)
    await clock.advance(by: .seconds(3))

    #expect(sink.steps.count == 1)
    #expect(sink.steps.first?.hasPrefix("finish failed") == true)
    #expect(clock.pendingCount == 0)
  }

  @Test(.timeLimit(.minutes(1))) func aStalledDribbleFailsWithTimedOut() async {
    let clock = VirtualClock(stallTimeout: .milliseconds(50))
    let mock = dribbledMock(on: clock)
    let seen = Deliveries()
    await expectReport {
      mock.dataTask(with: url, completionHandler: seen.handler).resume()
      await seen.waitForCount(1)  // the test never advances the clock past the head
    } matching: { report in
      report.message.contains("the delivery fails with URLError(.timedOut)")
    }

    #expect(seen.first?.urlError?.code == .timedOut)
    #expect(seen.first?.data == nil)
    #expect(clock.pendingCount == 0)
  }

  @Test func aDribbleOnAReleasedClockFailsWithAReport() {
    let seen = Deliveries()
    let task = releasedClockTask(seen)

    expectReport(containing: "on a VirtualClock that no longer exists") {
      task.resume()
    }

    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .timedOut)
  }

  /// A task whose mock and clock are gone: its core remains, its clock does not.
  private func releasedClockTask(_ seen: Deliveries) -> MockTask {
    let clock = VirtualClock()
    let mock = dribbledMock(on: clock)
    return mock.dataTask(with: url, completionHandler: seen.handler)
  }

  // MARK: - Invalid values

  @Test(arguments: [
    (0, Duration.seconds(4), "dribbled(inChunks: 0, over: 4.0 seconds) needs at least 1 chunk"),
    (-3, Duration.seconds(1), "dribbled(inChunks: -3, over: 1.0 seconds) needs at least 1 chunk"),
    (4, Duration.seconds(-1), "dribbled(inChunks: 4, over: -1.0 seconds) needs a duration"),
  ])
  func invalidValuesAreReportedNamingThemAndTheRequestFails(
    chunks: Int, duration: Duration, message: String
  ) {
    let mock = URLSessionMock()
    mock.stub(.any, with: StubResponse.data(payload).dribbled(inChunks: chunks, over: duration))
    let seen = Deliveries()

    expectReport(containing: "The stub registered here cannot answer", message) {
      mock.dataTask(with: url, completionHandler: seen.handler).resume()
    }

    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .resourceUnavailable)
  }
}

/// A sink that cancels its task from inside its `receive` of the `afterPieces`-th body piece,
/// while the core has the sink lent out.
private final class CancellingSink: ResponseSink, Sendable {
  let log = Shared<[String]>([])
  let task = Shared<MockTask?>(nil)
  private let afterPieces: Int

  init(afterPieces: Int) { self.afterPieces = afterPieces }

  func receive(_ response: URLResponse) { log.append("head") }

  func receive(_ body: Data) {
    log.append("piece")
    if log.current.filter({ $0 == "piece" }).count == afterPieces { task.current?.cancel() }
  }

  func finish(_ end: ExchangeEnd) {
    switch end {
    case .complete: log.append("end complete")
    case .failed(let error):
      let cancelled = (error as? URLError)?.code == .cancelled
      log.append(cancelled ? "end cancelled" : "end \(error)")
    case .unmatched: log.append("end unmatched")
    case .upgraded: log.append("end upgraded")
    }
  }
}

extension Result {
  fileprivate var failureError: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
