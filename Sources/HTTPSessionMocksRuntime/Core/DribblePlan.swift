import Foundation

/// A dribbled body cut into its pieces, each with its time after the response head: piece `i`
/// of `n` (from 1) at `duration · i / n`, so that the last one arrives when the duration is
/// over.
///
/// A body shorter than the number of chunks is sent one byte a piece, still spread over the
/// whole duration. A dribble with piece sizes (an event stream) is cut at them instead. A request's time limits
/// may cut the plan short (``cut(idle:total:)``): the pieces due after it are dropped and the
/// stream fails at the limit instead.
struct DribblePlan: Sendable {
  struct Piece: Sendable {
    let body: Data
    /// The time after the response head at which the piece is due.
    let offset: Duration
  }

  private(set) var pieces: [Piece]
  /// When the plan was cut by a timeout: the time after the head at which the stream fails.
  private(set) var failsAt: Duration?

  /// The plan for `body`, or `nil` when there is nothing to dribble (an empty body).
  /// `dribble` must be valid (``StubResponse/Dribble/problem`` is `nil`).
  init?(body: Data, _ dribble: StubResponse.Dribble) {
    guard !body.isEmpty, dribble.chunks >= 1, dribble.duration >= .zero else { return nil }
    if let sizes = dribble.pieceSizes, sizes.count == dribble.chunks,
      sizes.allSatisfy({ $0 > 0 }), sizes.reduce(0, +) == body.count
    {
      // Cut where the body's parts end (an event stream's events), piece `i` at the same
      // time as an even dribble's.
      let step = dribble.duration / sizes.count
      var start = body.startIndex
      pieces = sizes.enumerated().map { index, size in
        defer { start += size }
        let offset = index + 1 == sizes.count ? dribble.duration : step * (index + 1)
        return Piece(body: Data(body[start..<(start + size)]), offset: offset)
      }
      return
    }
    let count = min(dribble.chunks, body.count)
    // Sizes differ by at most one byte: the first `extra` pieces get one more. Worked out
    // without multiplying, so no body or chunk count can overflow.
    let (size, extra) = body.count.quotientAndRemainder(dividingBy: count)
    let step = dribble.duration / count
    var pieces: [Piece] = []
    pieces.reserveCapacity(count)
    var start = body.startIndex
    for index in 1...count {
      let end = start + size + (index <= extra ? 1 : 0)
      let offset = index == count ? dribble.duration : step * index
      pieces.append(Piece(body: Data(body[start..<end]), offset: offset))
      start = end
    }
    self.pieces = pieces
  }

  /// Cuts the plan where a request's time limits end it: the first piece that comes more than
  /// `idle` after the piece before it (the head is at zero), or after `total`, and every piece
  /// after it, are dropped, and the stream fails at the limit it hit (the idle timer runs out
  /// at the earlier piece's time plus `idle`). A piece exactly at a limit still arrives.
  /// Changes nothing when every piece is due in time.
  mutating func cut(idle: Duration?, total: Duration?) {
    var previous = Duration.zero
    for (index, piece) in pieces.enumerated() {
      var limit: Duration?
      if let idle, piece.offset - previous > idle { limit = previous + idle }
      if let total, piece.offset > total { limit = min(limit ?? total, total) }
      if let limit {
        pieces.removeSubrange(index...)
        failsAt = limit
        return
      }
      previous = piece.offset
    }
  }
}

/// The pieces of a streamed answer delivered so far, with the time of each since the request
/// was sent: what the exchange records (``Exchange/pieces``).
final class PieceLog: Sendable {
  private let start: Scheduler.Moment
  private let delivered = Locked<[Exchange.Piece]>([])

  init(since start: Scheduler.Moment) {
    self.start = start
  }

  func record(_ byteCount: Int, at moment: Scheduler.Moment) {
    let piece = Exchange.Piece(byteCount: byteCount, time: Scheduler.time(from: start, to: moment))
    delivered.withLock { $0.append(piece) }
  }

  var pieces: [Exchange.Piece] { delivered.withLock { $0 } }
}
