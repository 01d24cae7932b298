import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension HTTPSession {
  /// Sends a request with ``data(for:)`` and returns the whole body as a stream of one piece.
  ///
  /// The default for a session of your own that does not stream: it returns when the whole
  /// body has arrived, so it suits finite bodies only. `URLSession` and the doubles of
  /// `HTTPSessionMocks` implement ``stream(for:)`` themselves and deliver each piece as it
  /// arrives (see <doc:StreamingResponses>).
  public func stream(for request: URLRequest) async throws -> (HTTPByteStream, URLResponse) {
    let (data, response) = try await data(for: request)
    return (HTTPByteStream(data), response)
  }
}
