import Foundation

extension HTTPByteStream {
  /// The body as lines of text, split at LF, CR and CRLF wherever the pieces break, decoded as
  /// UTF-8 (an invalid sequence becomes U+FFFD); a last line without a line end is included.
  ///
  /// ```swift
  /// for try await line in stream.lines where line.hasPrefix("ERROR") { errors.append(line) }
  /// ```
  public var lines: Lines { Lines(bytes: self) }

  /// The lines of a ``HTTPByteStream``: an `AsyncSequence` of `String`, without line ends.
  public struct Lines: AsyncSequence, Sendable {
    /// A line, without its line end.
    public typealias Element = String

    let bytes: HTTPByteStream

    /// Starts reading the lines; leaving early cancels the request, as for the stream.
    public func makeAsyncIterator() -> Iterator { Iterator(bytes.makeAsyncIterator()) }

    /// Reads the lines of a ``HTTPByteStream``.
    public struct Iterator: AsyncIteratorProtocol {
      private var base: HTTPByteStream.Iterator
      private var splitter = LineSplitter()
      private var ready: [[UInt8]] = []
      private var ended = false

      init(_ base: HTTPByteStream.Iterator) { self.base = base }

      /// The next line, `nil` after the last, or the error that ended the transfer.
      public mutating func next() async throws -> String? {
        while ready.isEmpty {
          if ended { return nil }
          if let piece = try await base.next() {
            ready = splitter.split(piece)
          } else {
            ended = true
            if let last = splitter.finish() { ready = [last] }
          }
        }
        return String(decoding: ready.removeFirst(), as: UTF8.self)
      }
    }
  }
}
