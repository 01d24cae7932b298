import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `.events` stub served over loopback: real chunked server-sent events, each written when
/// the mock's clock reaches it, so real clients read each event before the stream ends.
@Suite struct EventStreamServingTests {
  private let events = [
    ServerSentEvent(id: "1", event: "tick", data: "one"),
    ServerSentEvent(data: "two"),
    ServerSentEvent(data: "three"),
  ]

  @Test(.timeLimit(.minutes(1)))
  func aRealURLSessionReadsEachEventWhenTheClockReachesIt() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/events"), with: .events(events, every: .seconds(1)))
    let server = try mock.startServer()
    defer { server.stop() }
    let session = liveSession()
    defer { session.finishTasksAndInvalidate() }

    let (stream, response) = try await session.stream(
      for: URLRequest(url: server.baseURL.appendingPathComponent("events")))
    let http = try #require(response as? HTTPURLResponse)
    #expect(http.value(forHTTPHeaderField: "Content-Type") == "text/event-stream")
    #expect(http.value(forHTTPHeaderField: "Content-Length") == nil)
    var received = stream.events.makeAsyncIterator()
    // Only the first event has been written: the others wait for the clock.
    await clock.advance(by: .seconds(1))
    #expect(try await received.next() == events[0])
    await clock.advance(by: .seconds(1))
    #expect(try await received.next() == events[1])
    await clock.advance(by: .seconds(1))
    #expect(try await received.next() == events[2])
    #expect(try await received.next() == nil)
  }

  @Test(
    .enabled(if: installed("curl") != nil, "curl is not installed (apt-get install curl)"),
    .timeLimit(.minutes(1)))
  func curlSeesTheFirstEventBeforeTheStreamEnds() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/events"), with: .events(events, every: .seconds(1)))
    let server = try mock.startServer()
    defer { server.stop() }
    let curl = try ChildProcess(
      URL(fileURLWithPath: try #require(installed("curl"))),
      ["-sN", "--max-time", "30", server.baseURL.appendingPathComponent("events").absoluteString],
      environment: cleanEnvironment())
    defer { curl.stop() }
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(1))
    #expect(await curl.line(timeout: 20) == "id: 1")
    #expect(await curl.line(timeout: 20) == "event: tick")
    #expect(await curl.line(timeout: 20) == "data: one")
    #expect(await curl.line(timeout: 20) == "")
    #expect(!curl.outputText.contains("two"), "the second event waits for the clock")
    await clock.run()
    #expect(await curl.exit(timeout: 20) == 0)
    #expect(curl.outputText.hasSuffix("data: three\n\n"))
  }
}
