import Foundation
import HTTPSessionKit

/// One step of a scripted `text/event-stream`: what the stream carries next, or how long it
/// waits, or that the connection drops. ``StubResponse/events(_:status:headers:)`` plays the
/// steps in order on the mock's clock.
///
/// A real stream carries more than events: comments that keep the connection alive, a `retry`
/// that tells the client how long to wait before reconnecting, ids and event types, and lines
/// a client must skip. Each step is written as a server writes it, and every step before a
/// ``wait(_:)`` is released at the same instant:
///
/// ```swift
/// mock.stub(.get("/feed"), with: .events([
///   .retry(.seconds(3)),
///   .event(ServerSentEvent(id: "1", event: "price", data: "41")),
///   .wait(.seconds(15)),
///   .comment("heartbeat"),
///   .wait(.seconds(15)),
///   .event(ServerSentEvent(id: "2", event: "price", data: "42")),
///   .drop,  // the connection drops: the client reconnects with Last-Event-ID: 2
/// ]))
/// ```
public struct EventStreamStep: Sendable, Hashable, CustomStringConvertible {
  enum Kind: Sendable, Hashable {
    case text(String)
    case wait(Duration)
    case drop
  }

  let kind: Kind

  /// An event, written as `ServerSentEvent.eventStreamText` writes it (its `id:`, `event:`,
  /// `retry:` and `data:` lines, then a blank line).
  public static func event(_ event: ServerSentEvent) -> EventStreamStep {
    EventStreamStep(kind: .text(event.eventStreamText))
  }

  /// A comment line (`: text`), which clients skip: a heartbeat that keeps the connection (and
  /// the client's idle timeout) alive. Each line of `text` becomes a comment line; an empty
  /// text writes a bare `:`.
  public static func comment(_ text: String = "") -> EventStreamStep {
    let lines = text.isEmpty ? [""] : text.split(separator: "\n", omittingEmptySubsequences: false)
    return EventStreamStep(
      kind: .text(lines.map { $0.isEmpty ? ":\n" : ": \($0)\n" }.joined()))
  }

  /// A `retry:` field alone (in milliseconds), followed by a blank line: the client's
  /// reconnection time from now on.
  public static func retry(_ delay: Duration) -> EventStreamStep {
    let milliseconds =
      delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
    return EventStreamStep(kind: .text("retry: \(max(milliseconds, 0))\n\n"))
  }

  /// Text written exactly as given: lines a client must cope with (unknown fields, `\r\n`
  /// endings, an event split across steps). Add the line ends yourself.
  public static func raw(_ text: String) -> EventStreamStep {
    EventStreamStep(kind: .text(text))
  }

  /// The stream waits this long on the mock's clock before its next step (or its end).
  public static func wait(_ duration: Duration) -> EventStreamStep {
    EventStreamStep(kind: .wait(max(duration, .zero)))
  }

  /// The connection drops here: the steps before it are delivered, then the injected mock and
  /// the URLProtocol bridge fail the request with `URLError(.networkConnectionLost)`, and the
  /// loopback server closes the connection in the middle of its chunked body. Steps after it
  /// are never sent.
  public static let drop = EventStreamStep(kind: .drop)

  /// The step as the stream writes it, or `wait 15.0 seconds`, or `drop`.
  public var description: String {
    switch kind {
    case .text(let text): return text.debugDescription
    case .wait(let duration): return "wait \(duration)"
    case .drop: return "drop"
    }
  }
}
