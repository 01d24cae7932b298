import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking

  // Apple's Foundation declares these four on `URLSession` (iOS 13, macOS 10.15, tvOS 13,
  // watchOS 6); swift-corelibs-foundation has only the forms with a `delegate:` parameter.
  // `.ci/apple-standin` builds the package beside them, so that a second public overload from
  // the package fails here as it would on a Mac ("ambiguous use of 'data'"). Each forwards to
  // corelibs' form with no task delegate. (On an Apple platform this file is empty: the real
  // methods are there.)
  extension URLSession {
    /// Apple's `data(for:)`: loads the data of a request with a data task and no task delegate.
    ///
    /// Stands in for developer.apple.com/documentation/foundation/urlsession/data(for:)
    /// (iOS 13.0+, macOS 10.15+, tvOS 13.0+, watchOS 6.0+).
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
      try await data(for: request, delegate: nil)
    }

    /// Apple's `data(from:)`: loads the data of a URL with a data task and no task delegate.
    ///
    /// Stands in for developer.apple.com/documentation/foundation/urlsession/data(from:)
    /// (iOS 13.0+, macOS 10.15+, tvOS 13.0+, watchOS 6.0+).
    public func data(from url: URL) async throws -> (Data, URLResponse) {
      try await data(from: url, delegate: nil)
    }

    /// Apple's `upload(for:from:)`: uploads a body with an upload task and no task delegate.
    ///
    /// Stands in for developer.apple.com/documentation/foundation/urlsession/upload(for:from:)
    /// (iOS 13.0+, macOS 10.15+, tvOS 13.0+, watchOS 6.0+).
    public func upload(for request: URLRequest, from bodyData: Data) async throws -> (
      Data, URLResponse
    ) {
      try await upload(for: request, from: bodyData, delegate: nil)
    }

    /// Apple's `upload(for:fromFile:)`: uploads a file with an upload task and no task delegate.
    ///
    /// Stands in for
    /// developer.apple.com/documentation/foundation/urlsession/upload(for:fromfile:)
    /// (iOS 13.0+, macOS 10.15+, tvOS 13.0+, watchOS 6.0+).
    public func upload(for request: URLRequest, fromFile fileURL: URL) async throws -> (
      Data, URLResponse
    ) {
      try await upload(for: request, fromFile: fileURL, delegate: nil)
    }
  }
#endif
