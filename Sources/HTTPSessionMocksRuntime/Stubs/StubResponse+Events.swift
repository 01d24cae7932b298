import Foundation
import HTTPSessionKit

extension StubResponse {
  /// A `text/event-stream` answer that sends `events` one at a time, each `interval` after the
  /// one before it on the mock's clock: server-sent events for live updates and token streams.
  ///
  /// The head arrives at the answer's time (after any ``delayed(by:)-(Duration)``), then event `i` (from
  /// 1) at `interval · i`; the stream ends with the last event. The events are written as
  /// `ServerSentEvent.eventStreamText` writes them.
  ///
  /// ```swift
  /// let clock = VirtualClock()
  /// let mock = URLSessionMock(clock: clock)
  /// mock.stub(.get("/prices"), with: .events([ServerSentEvent(event: "price", data: "42")], every: .seconds(1)))
  /// let (stream, _) = try await mock.stream(for: URLRequest(url: pricesURL))
  /// // each clock.advance(by: .seconds(1)) delivers the next event to stream.events
  /// ```
  ///
  /// Each door delivers the events as it delivers a dribbled body
  /// (``dribbled(inChunks:over:)``): `stream(for:)` on the mock hands each to the stream when
  /// the clock reaches it, the loopback server writes each as a chunk of a chunked body when
  /// the clock reaches it (so a browser's `EventSource` and `curl -N` see them as they come),
  /// and a completion handler or `data(for:)` gets the whole stream at its end.
  ///
  /// - Parameters:
  ///   - events: The events, in order; none answers an empty stream at once.
  ///   - interval: The time between events; `.zero` sends them all with the head.
  ///   - status: The status code, 200 by default.
  ///   - headers: Header fields; `Content-Type` is `text/event-stream` and `Cache-Control` is
  ///     `no-cache` unless they say otherwise.
  public static func events(
    _ events: [ServerSentEvent], every interval: Duration, status: Int = 200,
    headers: [String: String] = [:]
  ) -> StubResponse {
    var fields = headers
    for (name, value) in [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]
    where !fields.keys.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
      fields[name] = value
    }
    let texts = events.map { Data($0.eventStreamText.utf8) }
    let response = StubResponse.data(Data(texts.joined()), status: status, headers: fields)
    guard !texts.isEmpty else { return response }
    // Clamped so that no interval, however long, overflows the stream's whole duration.
    let longest = Duration.seconds(Int64.max) / texts.count
    return response.dribbled(
      inPiecesOf: texts.map(\.count), over: min(max(interval, .zero), longest) * texts.count)
  }
}
