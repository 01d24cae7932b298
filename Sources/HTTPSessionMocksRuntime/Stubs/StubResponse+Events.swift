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

  /// A `text/event-stream` answer that plays `steps` in order on the mock's clock: events,
  /// comments and heartbeats, `retry`, raw lines, waits between them, and a connection that
  /// drops (see ``EventStreamStep``).
  ///
  /// The head arrives at the answer's time (after any ``delayed(by:)-(Duration)``); the steps
  /// before the first ``EventStreamStep/wait(_:)`` come with it, and each wait moves the time of
  /// the steps after it. The stream ends after its last step (a final wait keeps it open until
  /// then), or drops at ``EventStreamStep/drop``.
  ///
  /// ```swift
  /// let clock = VirtualClock()
  /// let mock = URLSessionMock(clock: clock)
  /// mock.stub(.get("/feed"), with: .events([
  ///   .event(ServerSentEvent(id: "1", data: "hello")),
  ///   .wait(.seconds(20)), .comment("heartbeat"),
  ///   .wait(.seconds(20)), .event(ServerSentEvent(id: "2", data: "again")),
  ///   .drop,
  /// ]))
  /// ```
  ///
  /// A request's timeout is an idle timer that each step's data starts again, so heartbeats
  /// keep a quiet stream alive as they do for URLSession; a wait longer than the timeout with
  /// nothing sent fails the request with `URLError(.timedOut)` then.
  ///
  /// - Parameters:
  ///   - steps: What the stream carries, in order.
  ///   - status: The status code, 200 by default.
  ///   - headers: Header fields; `Content-Type` is `text/event-stream` and `Cache-Control` is
  ///     `no-cache` unless they say otherwise.
  public static func events(
    _ steps: [EventStreamStep], status: Int = 200, headers: [String: String] = [:]
  ) -> StubResponse {
    var fields = headers
    for (name, value) in [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]
    where !fields.keys.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
      fields[name] = value
    }
    var body = Data()
    var sizes: [Int] = []
    var times: [Duration] = []
    var time = Duration.zero
    var pending = Data()
    var drops = false
    // Clamped so that no wait, however long, overflows the stream's time.
    let longest = Duration.seconds(Int64.max / 4)
    func flush() {
      guard !pending.isEmpty else { return }
      body.append(pending)
      sizes.append(pending.count)
      times.append(time)
      pending = Data()
    }
    for step in steps {
      switch step.kind {
      case .text(let text): pending.append(contentsOf: Data(text.utf8))
      case .wait(let duration):
        flush()
        time = min(time + min(duration, longest), longest)
      case .drop: drops = true
      }
      if drops { break }
    }
    flush()
    return StubResponse.data(body, status: status, headers: fields)
      .streamed(inPiecesOf: sizes, at: times, endingAt: time, drops: drops)
  }
}
