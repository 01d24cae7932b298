import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `stream(for:)` on the doubles: the head at once, a dribbled body piece by piece on the
/// mock's clock, any other body whole; leaving early cancels, and failures throw where
/// URLSession's do.
@Suite struct StreamingSessionTests {
  private let url = URL(string: "https://api.example.com/log")!

  private func text(_ data: Data?) -> String? {
    data.map { String(decoding: $0, as: UTF8.self) }
  }

  @Test func aDribbledBodyArrivesPieceByPieceOnTheClock() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/log"), with: .text("aaa\nbbb\nccc\n").dribbled(inChunks: 3, over: .seconds(3)))
    let session: any HTTPSession = mock

    let (stream, response) = try await session.stream(for: URLRequest(url: url))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    var pieces = stream.makeAsyncIterator()
    await clock.advance(by: .seconds(1))
    #expect(text(try await pieces.next()) == "aaa\n")
    #expect(mock.exchanges.isEmpty, "the exchange is not over after the first piece")
    await clock.advance(by: .seconds(2))
    #expect(text(try await pieces.next()) == "bbb\n")
    #expect(text(try await pieces.next()) == "ccc\n")
    #expect(try await pieces.next() == nil)
    #expect(mock.exchanges.count == 1)
    #expect(mock.exchanges.first?.error == nil)
  }

  @Test func linesSpanThePiecesOfADribbledBody() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/log"), with: .text("alpha\nbeta\ngamma\n").dribbled(inChunks: 7, over: .zero))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    var lines: [String] = []
    for try await line in stream.lines { lines.append(line) }
    #expect(lines == ["alpha", "beta", "gamma"])
  }

  @Test func anyOtherBodyArrivesWholeInOnePiece() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/log"), with: .text("whole body"))
    mock.stub(.get("/empty"), with: .status(204))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    var pieces: [String] = []
    for try await piece in stream { pieces.append(text(piece) ?? "") }
    #expect(pieces == ["whole body"])

    let (empty, response) = try await mock.stream(
      for: URLRequest(url: URL(string: "https://api.example.com/empty")!))
    #expect((response as? HTTPURLResponse)?.statusCode == 204)
    var count = 0
    for try await _ in empty { count += 1 }
    #expect(count == 0)
  }

  @Test func leavingTheLoopEarlyCancelsTheRequest() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/log"), with: .text("1\n2\n3\n4\n").dribbled(inChunks: 4, over: .seconds(4)))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    await clock.advance(by: .seconds(2))
    var seen: [String] = []
    for try await line in stream.lines {
      seen.append(line)
      if seen.count == 2 { break }
    }
    #expect(seen == ["1", "2"])
    let error = try #require(mock.exchanges.last?.error as? URLError)
    #expect(error.code == .cancelled)
    await clock.run()
    #expect(mock.exchanges.count == 1, "nothing more is answered after the cancel")
  }

  @Test func anErrorBeforeTheHeadThrowsFromTheCall() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/log"), with: .error(URLError(.notConnectedToInternet)))
    await #expect {
      _ = try await mock.stream(for: URLRequest(url: url))
    } throws: { ($0 as? URLError)?.code == .notConnectedToInternet }
  }

  @Test func anUnmatchedRequestThrowsAndIsReported() async throws {
    let mock = URLSessionMock()
    await expectReport(containing: "GET https://api.example.com/log") {
      await #expect(throws: URLError.self) {
        _ = try await mock.stream(for: URLRequest(url: url))
      }
    }
  }

  @Test func cancellingTheCallerBeforeTheHeadCancelsTheRequest() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/log"), with: .text("late").delayed(by: .seconds(5)))
    let caller = Task { try await mock.stream(for: URLRequest(url: url)) }
    try await mock.waitForRequests(count: 1)
    caller.cancel()
    await #expect { _ = try await caller.value } throws: {
      ($0 as? URLError)?.code == .cancelled
    }
  }

  @Test func aSpyStreamsTheAnswerTheTestCompletesWith() async throws {
    let spy = SpySession()
    let caller = Task { try await spy.stream(for: URLRequest(url: url)) }
    try await spy.waitForRequests(count: 1)
    let task = try #require(spy.pendingTasks(matching: .get("/log")).first)
    spy.complete(task, with: .text("from the test"))
    let (stream, _) = try await caller.value
    var body = Data()
    for try await piece in stream { body.append(piece) }
    #expect(text(body) == "from the test")
  }

  @Test func theJournalRecordsWhenEachPieceWasDelivered() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    let events = ["one", "two", "three"].map { ServerSentEvent(data: $0) }
    mock.stub(.get("/log"), with: .events(events, every: .seconds(1)).delayed(by: .seconds(1)))
    let reader = Task { () -> Int in
      let (stream, _) = try await mock.stream(for: URLRequest(url: url))
      var count = 0
      for try await _ in stream.events { count += 1 }
      return count
    }
    try await mock.waitForRequests(count: 1)
    await clock.run()
    #expect(try await reader.value == 3)
    let pieces = try #require(mock.exchanges.first?.pieces)
    // The head after the delay, then one event a second.
    #expect(pieces.map(\.time) == [.seconds(2), .seconds(3), .seconds(4)])
    #expect(pieces.map(\.byteCount) == events.map { $0.eventStreamText.utf8.count })
    #expect(pieces.first?.description == "\(pieces[0].byteCount) bytes at 2.0 seconds")
  }

  @Test func aStreamLeftEarlyRecordsThePiecesDeliveredBeforeTheCancel() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/log"),
      with: .events((1...10).map { ServerSentEvent(data: "\($0)") }, every: .seconds(1)))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    let reader = Task {
      for try await event in stream.events where event.data == "2" { break }
    }
    await clock.advance(by: .seconds(2))
    try await reader.value  // the clock stands still until the reader has left
    let exchange = try #require(mock.exchanges.first)
    #expect((exchange.error as? URLError)?.code == .cancelled)
    #expect(exchange.pieces.map(\.time) == [.seconds(1), .seconds(2)])
  }

  @Test func anAnswerGivenWholeHasNoPieces() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/log"), with: .text("whole"))
    _ = try await mock.data(from: url)
    #expect(mock.exchanges.first?.pieces == [])
  }
}
