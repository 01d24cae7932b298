import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking

  // Apple's `bytes(for:delegate:)`, `bytes(from:delegate:)` and `URLSession.AsyncBytes` (iOS 15,
  // macOS 12, tvOS 15, watchOS 8), which corelibs Foundation lacks: the package's own streaming
  // API (`stream(for:)`, `HTTPByteStream`) must not collide with them. Only their shape: the
  // whole body arrives before the first byte is read, where Apple's sequence delivers the bytes
  // as they arrive.
  extension URLSession {
    /// Apple's `URLSession.AsyncBytes`: a response body as an asynchronous sequence of bytes.
    ///
    /// Stands in for developer.apple.com/documentation/foundation/urlsession/asyncbytes
    /// (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+).
    public struct AsyncBytes: AsyncSequence, Sendable {
      /// The sequence's element: one byte of the body.
      public typealias Element = UInt8

      /// The URL session task that performs the data transfer.
      public let task: URLSessionDataTask
      let body: Data

      /// Makes an iterator over the bytes of the body.
      public func makeAsyncIterator() -> Iterator {
        Iterator(bytes: body.makeIterator())
      }

      /// Apple's `URLSession.AsyncBytes.Iterator`: reads the bytes one at a time.
      public struct Iterator: AsyncIteratorProtocol {
        var bytes: Data.Iterator

        /// The next byte, or `nil` after the last one.
        public mutating func next() async throws -> UInt8? {
          bytes.next()
        }
      }
    }

    /// Apple's `bytes(for:delegate:)`: the body of a request's response as bytes.
    ///
    /// Stands in for developer.apple.com/documentation/foundation/urlsession/bytes(for:delegate:)
    /// (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+). Apple declares no form without
    /// `delegate:`; the parameter has a default, as Apple's has.
    public func bytes(
      for request: URLRequest, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (AsyncBytes, URLResponse) {
      let started = StartedTask()
      return try await withCheckedThrowingContinuation { continuation in
        let task = dataTask(with: request) { body, response, error in
          guard error == nil, let task = started.task, let response else {
            continuation.resume(throwing: error ?? URLError(.badServerResponse))
            return
          }
          continuation.resume(returning: (AsyncBytes(task: task, body: body ?? Data()), response))
        }
        task.delegate = delegate
        started.task = task
        task.resume()
      }
    }

    /// Apple's `bytes(from:delegate:)`: the body of a URL's response as bytes.
    ///
    /// Stands in for
    /// developer.apple.com/documentation/foundation/urlsession/bytes(from:delegate:)
    /// (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+). Apple declares no form without
    /// `delegate:`; the parameter has a default, as Apple's has.
    public func bytes(
      from url: URL, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (AsyncBytes, URLResponse) {
      try await bytes(for: URLRequest(url: url), delegate: delegate)
    }
  }

  /// The task of a `bytes(for:delegate:)` call, for its own completion handler.
  private final class StartedTask: @unchecked Sendable {
    // @unchecked Sendable: `task` is written once, before `resume()`, and read only by the
    // completion handler, which Foundation calls after `resume()`.
    var task: URLSessionDataTask?
  }
#endif
