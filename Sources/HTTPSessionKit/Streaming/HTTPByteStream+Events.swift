import Foundation

extension HTTPByteStream {
  /// The body as server-sent events (`text/event-stream`), parsed as the WHATWG standard says
  /// (see ``ServerSentEvent``): each event as soon as its blank line arrives.
  ///
  /// ```swift
  /// for try await event in stream.events {
  ///   if event.event == "done" { break }  // leaving the loop cancels the request
  ///   tokens.append(event.data)
  /// }
  /// ```
  ///
  /// Comments, unknown fields and data-less events are skipped; a last event without its blank
  /// line is discarded, as `EventSource` does.
  public var events: Events { Events(bytes: self) }

  /// The server-sent events of a ``HTTPByteStream``: an `AsyncSequence` of ``ServerSentEvent``.
  public struct Events: AsyncSequence, Sendable {
    /// An event, dispatched.
    public typealias Element = ServerSentEvent

    let bytes: HTTPByteStream

    /// Starts reading the events; leaving early cancels the request, as for the stream.
    public func makeAsyncIterator() -> Iterator { Iterator(bytes.makeAsyncIterator()) }

    /// Reads the events of a ``HTTPByteStream``.
    public struct Iterator: AsyncIteratorProtocol {
      private var base: HTTPByteStream.Iterator
      private var parser = EventStreamParser()
      private var ready: [ServerSentEvent] = []
      private var ended = false

      init(_ base: HTTPByteStream.Iterator) { self.base = base }

      /// The last event id the stream set, carried over events without an `id` field, as
      /// `EventSource`'s `lastEventId`; empty until one is set. Send it as `Last-Event-ID`
      /// when reconnecting.
      public var lastEventID: String { parser.lastEventID }

      /// The next event, `nil` at the end of the stream, or the error that ended the transfer.
      public mutating func next() async throws -> ServerSentEvent? {
        while ready.isEmpty {
          if ended { return nil }
          guard let piece = try await base.next() else {
            ended = true
            return nil
          }
          ready = parser.parse(piece)
        }
        return ready.removeFirst()
      }
    }
  }
}
