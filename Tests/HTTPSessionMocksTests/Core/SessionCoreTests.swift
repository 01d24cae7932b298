import Foundation
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The seam every door calls: `URLSessionMock.send(_:kind:door:to:)` and the sink it answers
/// into, tested directly with a sink that records what it receives.
@Suite struct SessionCoreTests {
  private let url = URL(string: "https://api.example.com/users/octocat")!

  @Test func aSinkReceivesTheHeadThenTheBodyThenTheEnd() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .text("hello", headers: ["X-Trace": "1"]))
    let sink = RecordingSink()

    let task = mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)

    #expect(sink.steps == ["response 200", "body 5 bytes", "finish complete"])
    #expect(sink.response?.value(forHTTPHeaderField: "X-Trace") == "1")
    #expect(sink.response?.value(forHTTPHeaderField: "Content-Length") == "5")
    #expect(sink.body == Data("hello".utf8))
    #expect(task.state == .completed)
    let exchange = try #require(mock.exchanges.first)
    #expect(exchange.door == .server)
    #expect(exchange.answeredBy?.hasPrefix("GET /users/{login} (registered at ") == true)
  }

  @Test func aDelayedAnswerReachesTheSinkWhenTheClockGetsThere() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(204).delayed(by: .seconds(2)))
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .injected, to: sink)
    #expect(sink.steps.isEmpty)
    await clock.advance(by: .seconds(1))
    #expect(sink.steps.isEmpty)
    await clock.advance(by: .seconds(1))

    #expect(sink.steps == ["response 204", "body 0 bytes", "finish complete"])
  }

  @Test func cancelBeforeADelayedAnswerEndsTheSinkWithCancelled() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(5)))
    let sink = RecordingSink()

    let task = mock.send(URLRequest(url: url), kind: .data, door: .injected, to: sink)
    await clock.advance(by: .seconds(1))
    task.cancel()
    #expect(sink.steps == ["finish failed cancelled"])
    #expect(clock.pendingCount == 0)
    await clock.advance(by: .seconds(10))

    #expect(sink.steps == ["finish failed cancelled"])
    #expect(mock.events.map(\.description).last == "#1 completed with error: URLError(.cancelled)")
  }

  @Test func cancelAfterTheAnswerChangesNothing() {
    let mock = URLSessionMock(status: 200)
    let sink = RecordingSink()

    let task = mock.send(URLRequest(url: url), kind: .data, door: .injected, to: sink)
    task.cancel()

    #expect(sink.steps == ["response 200", "body 0 bytes", "finish complete"])
    #expect(task.state == .completed)
  }

  @Test func anUnmatchedRequestEndsWithTheNearMissReport() {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .status(200))
    let sink = RecordingSink()

    expectReport(containing: "No stub matches GET https://api.example.com/user/octocat") {
      mock.send(
        URLRequest(url: URL(string: "https://api.example.com/user/octocat")!), kind: .data,
        door: .server, to: sink)
    }

    #expect(sink.steps == ["finish unmatched"])
    #expect(sink.unmatched?.report.contains("/users/{login}") == true)
    #expect(sink.unmatched?.error.code == .resourceUnavailable)
    #expect(mock.unmatchedRequests.count == 1)
  }

  @Test func aStubErrorEndsTheSinkWithThatError() {
    let mock = URLSessionMock(error: URLError(.networkConnectionLost))
    let sink = RecordingSink()

    mock.send(URLRequest(url: url), kind: .data, door: .server, to: sink)

    #expect(sink.steps == ["finish failed networkConnectionLost"])
  }

  @Test func theDoorIsRecordedForEachExchange() {
    let mock = URLSessionMock(status: 200)
    mock.send(URLRequest(url: url), kind: .data, door: .urlProtocol, to: RecordingSink())
    mock.dataTask(with: url) { _, _, _ in }.resume()

    #expect(mock.exchanges.map(\.door) == [.urlProtocol, .injected])
  }

  /// A cancel that comes while the delayed answer is being put on the clock (after its entry
  /// is queued, before the core stores what undoes it) finds nothing to undo; the core then
  /// undoes the entry itself as it stores it, so nothing is left waiting on the clock.
  @Test func aCancelWhileTheDelayedAnswerIsBeingScheduledLeavesNothingOnTheClock() async throws {
    // The clock reads its watchdog's time while it queues the entry: the cancel happens there.
    let duringScheduling = OneShot()
    let clock = VirtualClock(
      stallTimeout: .seconds(5), realTime: ClockThatActsWhenRead(action: duringScheduling))
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(3), clock: clock)
    let deliveries = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: deliveries.handler)
    duringScheduling.set { task.cancel() }

    task.resume()
    try await mock.waitForRequests(count: 1)

    #expect(deliveries.all.map(\.urlError?.code) == [.cancelled])
    #expect(clock.pendingCount == 0)
    await clock.run()
    #expect(clock.now == VirtualClock.Instant(offset: .zero))
    #expect(deliveries.all.map(\.urlError?.code) == [.cancelled])
  }
}

/// An action that runs once, the first time it is fired after being set.
private struct OneShot: Sendable {
  private let action = Shared<(@Sendable () -> Void)?>(nil)

  func set(_ action: @escaping @Sendable () -> Void) { self.action.withLock { $0 = action } }

  func fire() {
    let action = self.action.withLock { $0.take() }
    action?()
  }
}

/// A stand-in for the watchdog's real time that fires `action` when it is read and never
/// sleeps.
private struct ClockThatActsWhenRead: Clock {
  typealias Instant = ContinuousClock.Instant
  let action: OneShot
  let start = ContinuousClock.now

  var now: Instant {
    action.fire()
    return start
  }

  var minimumResolution: Duration { .zero }

  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    throw CancellationError()
  }
}

/// A sink that writes down each call it receives, in order.
final class RecordingSink: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: every field is only touched while `lock` is held.
  private let lock = NSLock()
  private var log: [String] = []
  private var head: HTTPURLResponse?
  private var received = Data()
  private var unmatchedAnswer: UnmatchedAnswer?

  var steps: [String] { lock.withLock { log } }
  var response: HTTPURLResponse? { lock.withLock { head } }
  var body: Data { lock.withLock { received } }
  var unmatched: UnmatchedAnswer? { lock.withLock { unmatchedAnswer } }

  func receive(_ response: URLResponse) {
    lock.withLock {
      head = response as? HTTPURLResponse
      log.append("response \(head?.statusCode ?? -1)")
    }
  }

  func receive(_ body: Data) {
    lock.withLock {
      received.append(body)
      log.append("body \(body.count) bytes")
    }
  }

  func finish(_ end: ExchangeEnd) {
    lock.withLock {
      switch end {
      case .complete:
        log.append("finish complete")
      case .failed(let error):
        let code = (error as? URLError)?.code
        let name =
          code == .cancelled
          ? "cancelled" : code == .networkConnectionLost ? "networkConnectionLost" : "\(error)"
        log.append("finish failed \(name)")
      case .unmatched(let answer):
        unmatchedAnswer = answer
        log.append("finish unmatched")
      case .upgraded:
        log.append("finish upgraded")
      }
    }
  }
}
