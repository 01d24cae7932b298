import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `StubResponse.events(_:every:)`: a `text/event-stream` whose events arrive one at a time on
/// the mock's clock.
@Suite struct EventStreamResponseTests {
  private let url = URL(string: "https://api.example.com/events")!
  private let three = [
    ServerSentEvent(id: "1", event: "tick", data: "one"),
    ServerSentEvent(data: "two\nlines"),
    ServerSentEvent(id: "3", data: "three"),
  ]

  @Test func eachEventArrivesWhenTheClockReachesIt() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/events"), with: .events(three, every: .seconds(1)))

    let (stream, response) = try await mock.stream(for: URLRequest(url: url))
    let http = try #require(response as? HTTPURLResponse)
    #expect(http.value(forHTTPHeaderField: "Content-Type") == "text/event-stream")
    #expect(http.value(forHTTPHeaderField: "Cache-Control") == "no-cache")
    var events = stream.events.makeAsyncIterator()
    await clock.advance(by: .seconds(1))
    #expect(try await events.next() == three[0])
    await clock.advance(by: .milliseconds(999))
    #expect(mock.exchanges.isEmpty, "the stream is still open before the second event")
    await clock.advance(by: .milliseconds(1))
    #expect(try await events.next() == three[1])
    await clock.advance(by: .seconds(1))
    #expect(try await events.next() == three[2])
    #expect(try await events.next() == nil)
    #expect(events.lastEventID == "3")
    #expect(mock.exchanges.count == 1)
  }

  @Test func aZeroIntervalSendsEveryEventWithTheHead() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/events"), with: .events(three, every: .zero))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    var data: [String] = []
    for try await event in stream.events { data.append(event.data) }
    #expect(data == ["one", "two\nlines", "three"])
  }

  @Test func noEventsIsAnEmptyStream() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/events"), with: .events([], every: .seconds(1)))
    let (stream, response) = try await mock.stream(for: URLRequest(url: url))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    var count = 0
    for try await _ in stream.events { count += 1 }
    #expect(count == 0)
  }

  @Test func aCompletionHandlerGetsTheWholeStreamAtItsEnd() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/events"), with: .events(three, every: .seconds(1)))
    let body = Shared<Data?>(nil)
    mock.dataTask(with: url) { data, _, _ in body.withLock { $0 = data } }.resume()
    await clock.advance(by: .seconds(2))
    #expect(body.withLock { $0 } == nil)
    await clock.advance(by: .seconds(1))
    #expect(body.withLock { $0 } == Data(three.map(\.eventStreamText).joined().utf8))
  }

  @Test func theStubSetsItsOwnStatusAndContentType() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/events"),
      with: .events(three, every: .zero, status: 201, headers: ["content-type": "text/x-events"]))
    let (_, response) = try await mock.stream(for: URLRequest(url: url))
    let http = try #require(response as? HTTPURLResponse)
    #expect(http.statusCode == 201)
    #expect(http.value(forHTTPHeaderField: "Content-Type") == "text/x-events")
  }

  @Test func anEventStreamTravelsInABundleWithItsPieces() async throws {
    var bundle = MockBundle()
    bundle.stub(.get("/events"), with: .events(three, every: .seconds(1)))
    let folder = try TemporaryFolder("events-bundle")
    try bundle.write(to: folder.url)
    let read = try MockBundle(contentsOf: folder.url)
    #expect(read == bundle)

    let clock = VirtualClock()
    let mock = URLSessionMock(bundle: read, clock: clock)
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    var events = stream.events.makeAsyncIterator()
    await clock.advance(by: .seconds(1))
    #expect(try await events.next()?.data == "one")
  }

  @Test func pieceSizesThatDoNotAddUpToTheBodyAreRefusedWithTheirPath() throws {
    let document = #"""
      {"version": 1, "entries": [{"request": {"url": "/events"}, "response": {"text": "data: one\n\n",
       "dribble": {"chunks": 2, "over": "2s", "pieces": [5, 9]}}}]}
      """#
    let folder = try TemporaryFolder("events-bad-pieces")
    let file = folder.url.appendingPathComponent("bundle.json")
    try Data(document.utf8).write(to: file)
    let error = try #require(throws: MockBundleError.self) {
      _ = try MockBundle(contentsOf: file)
    }
    #expect("\(error)".contains("entries[0].response.dribble.pieces"))
    #expect("\(error)".contains("11 bytes"))
  }
}
