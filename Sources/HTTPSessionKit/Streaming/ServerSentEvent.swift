/// One server-sent event, as `EventSource` dispatches it: its data, and its type, id and retry
/// time when the stream gave them.
///
/// Read events from a stream with ``HTTPByteStream/events``:
///
/// ```swift
/// let (stream, _) = try await session.stream(for: URLRequest(url: updatesURL))
/// for try await event in stream.events where event.event == "price" {
///   prices.append(event.data)
/// }
/// ```
///
/// ``eventStreamText`` writes one in the `text/event-stream` format, for a server or a stub.
public struct ServerSentEvent: Sendable, Hashable, CustomStringConvertible {
  /// The `id` field of this event, or `nil` when it had none.
  ///
  /// `EventSource`'s `lastEventId` carries the last id over to later events;
  /// ``HTTPByteStream/Events/Iterator/lastEventID`` does the same.
  public var id: String?
  /// The `event` field: the event's type, or `nil` for the default type, `message`.
  public var event: String?
  /// The data: the `data` fields of the event joined with newlines.
  public var data: String
  /// The `retry` field: how long a client should wait before it reconnects, or `nil`.
  public var retry: Duration?

  /// An event with `data` and, optionally, an id, a type and a reconnection time.
  public init(id: String? = nil, event: String? = nil, data: String, retry: Duration? = nil) {
    self.id = id
    self.event = event
    self.data = data
    self.retry = retry
  }

  /// The event in the `text/event-stream` format, ending with the blank line that dispatches
  /// it: `id: 1\nevent: tick\ndata: one\n\n`.
  ///
  /// A multi-line `data` becomes one `data` field per line (a CR, LF or CRLF ends a line). A
  /// line break in the id or type cannot be written, so it is replaced with a space; an id
  /// holding U+0000, which clients ignore, is written as it is. A retry time is written in
  /// whole milliseconds, rounded down.
  public var eventStreamText: String {
    var text = ""
    if let id { text += "id: " + Self.singleLine(id) + "\n" }
    if let event { text += "event: " + Self.singleLine(event) + "\n" }
    if let retry {
      let (seconds, attoseconds) = retry.components
      let milliseconds = max(0, seconds) * 1000 + max(0, attoseconds) / 1_000_000_000_000_000
      text += "retry: \(milliseconds)\n"
    }
    for line in Self.lines(of: data) { text += "data: " + line + "\n" }
    return text + "\n"
  }

  /// `data: one`, `event: tick data: one`: the fields that are set, on one line.
  public var description: String {
    var parts: [String] = []
    if let id { parts.append("id: \(id)") }
    if let event { parts.append("event: \(event)") }
    parts.append("data: \(data.debugDescription)")
    if let retry { parts.append("retry: \(retry)") }
    return parts.joined(separator: " ")
  }

  private static func singleLine(_ text: String) -> String {
    String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
  }

  /// The lines of `text` split at CR, LF and CRLF; an empty text is one empty line.
  private static func lines(of text: String) -> [Substring] {
    text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
  }
}
