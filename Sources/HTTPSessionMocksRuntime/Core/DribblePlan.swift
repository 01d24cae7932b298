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
  /// When the stream ends after the head, if later than its last piece.
  private(set) var endsAt: Duration?
  /// Whether the connection drops at the end instead of the body ending.
  private(set) var drops = false

  /// The plan for `body`, or `nil` when there is nothing to dribble (an empty body that
  /// neither drops nor waits). `dribble` must be valid (``StubResponse/Dribble/problem`` is
  /// `nil`).
  init?(body: Data, _ dribble: StubResponse.Dribble) {
    guard dribble.chunks >= 1, dribble.duration >= .zero else { return nil }
    let dropsOrWaits = dribble.dropsAtEnd || dribble.truncatedAfter != nil || dribble.endTime != nil
    guard !body.isEmpty || dropsOrWaits else { return nil }
    pieces = Self.pieces(of: body, dribble)
    drops = dribble.dropsAtEnd
    if let end = dribble.endTime, end > (pieces.last?.offset ?? .zero) { endsAt = end }
    if let limit = dribble.truncatedAfter { truncate(after: limit) }
  }

  private static func pieces(of body: Data, _ dribble: StubResponse.Dribble) -> [Piece] {
    guard !body.isEmpty else { return [] }
    if let sizes = dribble.pieceSizes, let times = dribble.pieceTimes, sizes.count == times.count,
      sizes.allSatisfy({ $0 > 0 }), sizes.reduce(0, +) == body.count
    {
      // Each piece at its own time (an event stream's steps).
      var start = body.startIndex
      return zip(sizes, times).map { size, time in
        defer { start += size }
        return Piece(body: Data(body[start..<(start + size)]), offset: time)
      }
    }
    if let sizes = dribble.pieceSizes, sizes.count == dribble.chunks,
      sizes.allSatisfy({ $0 > 0 }), sizes.reduce(0, +) == body.count
    {
      // Cut where the body's parts end (an event stream's events), piece `i` at the same
      // time as an even dribble's.
      let step = dribble.duration / sizes.count
      var start = body.startIndex
      return sizes.enumerated().map { index, size in
        defer { start += size }
        let offset = index + 1 == sizes.count ? dribble.duration : step * (index + 1)
        return Piece(body: Data(body[start..<(start + size)]), offset: offset)
      }
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
    return pieces
  }

  /// Keeps the first `limit` bytes (cutting a piece where the count ends inside it), then
  /// drops the connection at the time of the last piece kept (at the head for none).
  mutating func truncate(after limit: Int) {
    var kept: [Piece] = []
    var left = max(limit, 0)
    for piece in pieces where left > 0 {
      let body = piece.body.count <= left ? piece.body : Data(piece.body.prefix(left))
      kept.append(Piece(body: body, offset: piece.offset))
      left -= body.count
    }
    pieces = kept
    endsAt = nil
    drops = true
  }

  /// Cuts the plan where a request's time limits end it: the first piece that comes more than
  /// `idle` after the piece before it (the head is at zero), or after `total`, and every piece
  /// after it, are dropped, and the stream fails at the limit it hit (the idle timer runs out
  /// at the earlier piece's time plus `idle`). A piece exactly at a limit still arrives.
  /// Changes nothing when every piece is due in time.
  mutating func cut(idle: Duration?, total: Duration?) {
    var previous = Duration.zero
    // The pieces' times, then the end's (a stream that waits before it ends).
    let times = pieces.map(\.offset) + (endsAt.map { [$0] } ?? [])
    for (index, time) in times.enumerated() {
      var limit: Duration?
      if let idle, time - previous > idle { limit = previous + idle }
      if let total, time > total { limit = min(limit ?? total, total) }
      if let limit {
        if index < pieces.count { pieces.removeSubrange(index...) }
        endsAt = nil
        failsAt = limit
        return
      }
      previous = time
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
