import Foundation

/// Why a ``GitHubClient`` call failed.
///
/// Completion-handler methods deliver it in a `Result`; async methods throw it (and throw
/// `CancellationError` when their task is cancelled).
///
/// ```swift
/// do {
///   let user = try await client.fetchUser("ghost")
/// } catch GitHubError.httpStatus(404, _) {
///   showNotFound()
/// } catch let error as GitHubError {
///   showAlert(error.description)
/// }
/// ```
public enum GitHubError: Error, CustomStringConvertible {
  /// GitHub answered with a status outside `200..<300`; `body` is what it sent, usually JSON
  /// with a `message`.
  ///
  /// A `503` that is still failing after the ``RetryPolicy``'s last attempt ends up here too.
  case httpStatus(Int, body: Data)

  /// The answer had an acceptable status, but its body is not the JSON the client expected.
  ///
  /// The `DecodingError` says what was wrong and where (`codingPath`): a missing key, a
  /// string where a number was expected, or text that is not JSON at all.
  case undecodable(DecodingError)

  /// The request never got an HTTP answer.
  ///
  /// Usually a `URLError`: no connection, a timeout (`URLError(.timedOut)`),
  /// a cancelled completion-handler task (`URLError(.cancelled)`), or a response that was not
  /// HTTP (`URLError(.badServerResponse)`).
  case transport(any Error)

  /// The HTTP status code, for ``httpStatus(_:body:)``; `nil` for the other failures.
  ///
  /// ```swift
  /// #expect((error as? GitHubError)?.statusCode == 404)
  /// ```
  public var statusCode: Int? {
    if case .httpStatus(let code, _) = self { return code }
    return nil
  }

  /// A one-line explanation, such as `HTTP 404: Not Found`.
  ///
  /// For a status failure it uses GitHub's `message` when the body has one, so logs and alerts
  /// say why, not only what.
  public var description: String {
    switch self {
    case .httpStatus(let code, let body):
      struct Message: Decodable { var message: String }
      if let message = try? JSONDecoder().decode(Message.self, from: body).message {
        return "HTTP \(code): \(message)"
      }
      return "HTTP \(code)"
    case .undecodable(let error):
      return "undecodable body: \(Self.summary(of: error))"
    case .transport(let error as URLError):
      return "transport error: URLError(\(Self.name(of: error.code)))"
    case .transport(let error):
      return "transport error: \(error)"
    }
  }

  private static func summary(of error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
      context.codingPath.isEmpty
        ? "the top level" : context.codingPath.map(\.stringValue).joined(separator: ".")
    }
    switch error {
    case .keyNotFound(let key, let context):
      return "missing key \"\(key.stringValue)\" at \(path(context))"
    case .typeMismatch(let type, let context):
      return "expected \(type) at \(path(context))"
    case .valueNotFound(let type, let context):
      return "missing \(type) at \(path(context))"
    case .dataCorrupted(let context):
      return "invalid JSON at \(path(context))"
    @unknown default:
      return "\(error)"
    }
  }

  private static func name(of code: URLError.Code) -> String {
    switch code {
    case .cancelled: return ".cancelled"
    case .timedOut: return ".timedOut"
    case .notConnectedToInternet: return ".notConnectedToInternet"
    case .networkConnectionLost: return ".networkConnectionLost"
    case .badServerResponse: return ".badServerResponse"
    case .cannotConnectToHost: return ".cannotConnectToHost"
    default: return "code \(code.rawValue)"
    }
  }
}
