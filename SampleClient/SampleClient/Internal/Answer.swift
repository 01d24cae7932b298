import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An HTTP answer on its way through ``GitHubClient``: checked, then decoded.
struct Answer: @unchecked Sendable {
  // @unchecked Sendable: the body is a value and the response is never mutated once received.
  let data: Data
  let response: HTTPURLResponse

  /// What a session handed a completion handler, as an answer or a transport failure.
  static func received(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?)
    -> Result<Answer, GitHubError>
  {
    if let error { return .failure(.transport(error)) }
    guard let response = response as? HTTPURLResponse else {
      return .failure(.transport(URLError(.badServerResponse)))
    }
    return .success(Answer(data: data ?? Data(), response: response))
  }

  /// This answer if its status is a success, or ``GitHubError/httpStatus(_:body:)``.
  func validated() -> Result<Answer, GitHubError> {
    (200..<300).contains(response.statusCode)
      ? .success(self) : .failure(.httpStatus(response.statusCode, body: data))
  }

  /// The body decoded as `type`, or ``GitHubError/undecodable(_:)``.
  func decode<Value: Decodable>(_ type: Value.Type) -> Result<Value, GitHubError> {
    do {
      return .success(try JSONDecoder().decode(type, from: data))
    } catch let error as DecodingError {
      return .failure(.undecodable(error))
    } catch {
      let context = DecodingError.Context(
        codingPath: [], debugDescription: "\(error)", underlyingError: error)
      return .failure(.undecodable(.dataCorrupted(context)))
    }
  }

  /// The `Link` header's `rel="next"` URL.
  var nextPageURL: URL? {
    LinkHeader.url(for: "next", in: response.value(forHTTPHeaderField: "Link"))
  }

  /// The `Retry-After` header, when it is a number of seconds.
  var retryAfter: Duration? {
    response.value(forHTTPHeaderField: "Retry-After")
      .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
      .map { .seconds($0) }
  }
}
