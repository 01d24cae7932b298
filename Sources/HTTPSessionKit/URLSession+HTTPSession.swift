import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `URLSessionTask` and its subclasses are the production ``HTTPDataTask``s: `resume()`,
/// `cancel()`, `state` and `taskIdentifier` are their own.
extension URLSessionTask: HTTPDataTask {}

/// `URLSession` is the production ``HTTPSession``: Foundation's own methods satisfy the protocol
/// wherever Foundation has them.
///
/// On Apple platforms Foundation declares every requirement but ``HTTPSession/download(for:)``,
/// including the async `data(for:)`, `data(from:)` and `upload(for:from:)` without a task
/// delegate. Corelibs Foundation (Linux) has only the forms with a `delegate:` parameter, so
/// this module adds the missing ones there, in a protocol extension, whose members never win
/// overload resolution against a method of `URLSession` itself: a call on a `URLSession`
/// resolves to Foundation's method, on every platform, exactly as it did before the app imported
/// this module. See <doc:URLSessionConformance>.
extension URLSession: HTTPSession {}

extension HTTPSession where Self: URLSession {
  // Only where Foundation lacks them: on Apple platforms `URLSession` declares these itself, and
  // a second public overload would make every call of them ambiguous. CI's `.ci/apple-standin`
  // builds the package beside a stand-in of Apple's methods (the module AppleFoundationStandIn);
  // there, as on Apple platforms, Foundation's satisfy the protocol.
  #if canImport(FoundationNetworking) && !canImport(AppleFoundationStandIn)
    /// Sends a request with corelibs Foundation's `data(for:delegate:)` and no task delegate.
    ///
    /// On Linux only: Apple's Foundation declares `URLSession.data(for:)` itself (iOS 13,
    /// macOS 10.15), and that is the method that satisfies ``HTTPSession/data(for:)`` there.
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
      try await data(for: request, delegate: nil)
    }

    /// Fetches a URL with corelibs Foundation's `data(from:delegate:)` and no task delegate.
    ///
    /// On Linux only: Apple's Foundation declares `URLSession.data(from:)` itself (iOS 13,
    /// macOS 10.15), and that is the method that satisfies ``HTTPSession/data(from:)`` there.
    public func data(from url: URL) async throws -> (Data, URLResponse) {
      try await data(from: url, delegate: nil)
    }

    /// Uploads a body with corelibs Foundation's `upload(for:from:delegate:)` and no task
    /// delegate.
    ///
    /// On Linux only: Apple's Foundation declares `URLSession.upload(for:from:)` itself (iOS 13,
    /// macOS 10.15), and that is the method that satisfies ``HTTPSession/upload(for:from:)``
    /// there.
    public func upload(for request: URLRequest, from bodyData: Data) async throws -> (
      Data, URLResponse
    ) {
      try await upload(for: request, from: bodyData, delegate: nil)
    }
  #endif

  /// Downloads with Foundation's `download(for:delegate:)` and no task delegate.
  ///
  /// On every platform: neither Foundation declares `download(for:)` without a `delegate:`
  /// parameter. A call of `download(for:)` on a `URLSession` still resolves to Foundation's
  /// `download(for:delegate:)`, whose delegate defaults to `nil`; this method is what
  /// ``HTTPSession/download(for:)`` calls.
  public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await download(for: request, delegate: nil)
  }
}
