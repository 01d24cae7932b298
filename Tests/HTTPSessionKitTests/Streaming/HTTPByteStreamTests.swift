import Foundation
import HTTPSessionKit
import TestSupport
import Testing

/// The stream of a body: its pieces, its lines and its events, and the cancellation of the
/// request when its reader leaves early.
@Suite struct HTTPByteStreamTests {
  /// A stream of `pieces` that counts the calls of its cancel closure in `cancels`.
  private func stream(
    _ pieces: [String], ending error: (any Error)? = nil, open: Bool = false,
    cancels: Shared<Int>
  ) -> HTTPByteStream {
    let (chunks, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    for piece in pieces { continuation.yield(Data(piece.utf8)) }
    if !open { continuation.finish(throwing: error) }
    return HTTPByteStream(chunks, onCancel: { cancels.withLock { $0 += 1 } })
  }

  @Test func piecesArriveAsTheyWereYieldedAndTheEndCancelsNothing() async throws {
    let cancels = Shared(0)
    var pieces: [String] = []
    for try await piece in stream(["a", "bc", "d"], cancels: cancels) {
      pieces.append(String(decoding: piece, as: UTF8.self))
    }
    #expect(pieces == ["a", "bc", "d"])
    #expect(cancels.withLock { $0 } == 0)
  }

  @Test func linesAreSplitAcrossPiecesWhereverTheyBreak() async throws {
    let cancels = Shared(0)
    var lines: [String] = []
    let source = stream(["al", "pha\r", "\nbe", "ta\n\nga\rmm", "a"], cancels: cancels)
    for try await line in source.lines { lines.append(line) }
    #expect(lines == ["alpha", "beta", "", "ga", "mma"])
  }

  @Test func aCharacterSplitAcrossPiecesIsWholeInItsLine() async throws {
    let bytes = Array("größe\n".utf8)
    let (chunks, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    for byte in bytes { continuation.yield(Data([byte])) }
    continuation.finish()
    var lines: [String] = []
    for try await line in HTTPByteStream(chunks).lines { lines.append(line) }
    #expect(lines == ["größe"])
  }

  @Test func eventsArriveAsTheirBlankLinesDo() async throws {
    let cancels = Shared(0)
    let source = stream(
      ["id: 1\nda", "ta: one\n", "\ndata: two\n\n"], open: true, cancels: cancels)
    var iterator = source.events.makeAsyncIterator()
    #expect(try await iterator.next() == ServerSentEvent(id: "1", data: "one"))
    #expect(try await iterator.next() == ServerSentEvent(data: "two"))
    #expect(iterator.lastEventID == "1")
  }

  @Test func breakingOutOfTheLoopCancelsTheRequestOnce() async throws {
    let cancels = Shared(0)
    let source = stream(
      ["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"], open: true, cancels: cancels)
    var seen: [String] = []
    for try await event in source.events {
      seen.append(event.data)
      if seen.count == 2 { break }
    }
    #expect(seen == ["1", "2"])
    #expect(cancels.withLock { $0 } == 1)
  }

  @Test func aFailureIsThrownAfterTheDataBeforeIt() async throws {
    let cancels = Shared(0)
    let source = stream(["one\ntw"], ending: URLError(.networkConnectionLost), cancels: cancels)
    var lines: [String] = []
    await #expect(throws: URLError(.networkConnectionLost)) {
      for try await line in source.lines { lines.append(line) }
    }
    #expect(lines == ["one"])
    #expect(cancels.withLock { $0 } == 0)
  }

  @Test func cancellingTheReadingTaskCancelsTheRequestAndSaysSo() async throws {
    let cancels = Shared(0)
    let source = stream(["data: 1\n\n"], open: true, cancels: cancels)
    let first = Shared<String?>(nil)
    let reader = Task {
      for try await event in source.events {
        first.withLock { $0 = event.data }
        withUnsafeCurrentTask { $0?.cancel() }
      }
    }
    await #expect(throws: CancellationError.self) { try await reader.value }
    #expect(first.withLock { $0 } == "1")
    #expect(cancels.withLock { $0 } == 1)
  }

  @Test func aStreamOfOnePieceHoldsTheWholeBody() async throws {
    var pieces: [Data] = []
    for try await piece in HTTPByteStream(Data("whole".utf8)) { pieces.append(piece) }
    #expect(pieces == [Data("whole".utf8)])
    var none: [Data] = []
    for try await piece in HTTPByteStream(Data()) { none.append(piece) }
    #expect(none.isEmpty)
  }
}
