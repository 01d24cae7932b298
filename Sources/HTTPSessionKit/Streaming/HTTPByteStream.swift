import Foundation

/// The body of a response as it arrives: an `AsyncSequence` of the pieces of data, with
/// ``lines`` and ``events`` for bodies made of text lines or server-sent events.
///
/// ``HTTPSession/stream(for:)`` returns one once the response's head has arrived:
///
/// ```swift
/// let (stream, response) = try await session.stream(for: URLRequest(url: feedURL))
/// for try await line in stream.lines {
///   print(line)
/// }
/// ```
///
/// A stream can be iterated once. Leaving the loop early (`break`, a thrown error, the
/// iterating task's cancellation) cancels the request: the producer's `onCancel` runs, once.
/// A failure of the transfer is thrown from the iterator's `next()` after the data that came
/// before it; a cancelled reading task gets `CancellationError`.
public struct HTTPByteStream: AsyncSequence, Sendable {
  /// A piece of the body, as it arrived.
  public typealias Element = Data

  private let chunks: AsyncThrowingStream<Data, any Error>
  private let cancellation: Cancellation

  /// A stream that yields `chunks` and calls `onCancel` if its reader stops before they end.
  ///
  /// This is how an ``HTTPSession`` of your own builds the stream that ``HTTPSession/stream(for:)``
  /// returns:
  ///
  /// ```swift
  /// let (chunks, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
  /// let stream = HTTPByteStream(chunks, onCancel: { task.cancel() })
  /// // continuation.yield(piece) as pieces arrive; continuation.finish() at the end
  /// ```
  ///
  /// - Parameters:
  ///   - chunks: The pieces of the body; finishing it ends the stream, finishing it with an
  ///     error makes the reader's `next()` throw that error.
  ///   - onCancel: Called at most once, when the reader leaves before `chunks` ends (or the
  ///     reading task is cancelled), and never after the stream has ended.
  public init(
    _ chunks: AsyncThrowingStream<Data, any Error>, onCancel: @escaping @Sendable () -> Void = {}
  ) {
    self.chunks = chunks
    self.cancellation = Cancellation(onCancel)
  }

  /// A stream that yields `data` in one piece, then ends.
  public init(_ data: Data) {
    let (chunks, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    if !data.isEmpty { continuation.yield(data) }
    continuation.finish()
    self.init(chunks)
  }

  /// Starts reading the stream; only one iterator may read it.
  public func makeAsyncIterator() -> Iterator {
    Iterator(chunks.makeAsyncIterator(), cancellation: cancellation)
  }

  /// Reads a ``HTTPByteStream``; when it goes before the stream has ended, the request is
  /// cancelled.
  public struct Iterator: AsyncIteratorProtocol {
    private var base: AsyncThrowingStream<Data, any Error>.Iterator
    private let guardian: Guardian

    init(_ base: AsyncThrowingStream<Data, any Error>.Iterator, cancellation: Cancellation) {
      self.base = base
      self.guardian = Guardian(cancellation)
    }

    /// The next piece of the body, `nil` at its end, or the error that ended the transfer.
    public mutating func next() async throws -> Data? {
      do {
        guard let piece = try await base.next() else {
          // The chunks end early when the reading task is cancelled: then the request is
          // cancelled too, and the reader learns that the body is not whole.
          if Task.isCancelled {
            guardian.cancellation.cancel()
            throw CancellationError()
          }
          guardian.cancellation.ended()
          return nil
        }
        return piece
      } catch {
        guardian.cancellation.ended()
        throw error
      }
    }
  }

  /// Calls the producer's cancel closure once, unless the stream ended first.
  final class Cancellation: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read and written with `lock` held; the closure is
    // called after the lock is released.
    // NSLock, not the package's `Locked`: this module, the one production code links, sits below
    // the one that holds `Locked`, and a lock shared from here would be a generic call across
    // modules on every double's request path.
    private let lock = NSLock()
    private var state: (@Sendable () -> Void)?

    init(_ onCancel: @escaping @Sendable () -> Void) { state = onCancel }

    /// The stream ended on its own: nothing to cancel any more.
    func ended() {
      lock.lock()
      state = nil
      lock.unlock()
    }

    /// The reader left early: cancel the request, once.
    func cancel() {
      lock.lock()
      let onCancel = state
      state = nil
      lock.unlock()
      onCancel?()
    }
  }

  /// Lives as long as an iterator and its copies: when the last goes, the reader has left.
  final class Guardian: Sendable {
    let cancellation: Cancellation
    init(_ cancellation: Cancellation) { self.cancellation = cancellation }
    deinit { cancellation.cancel() }
  }
}
