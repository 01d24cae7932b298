import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A request for the routing tests: `method` and `url`, with optional headers and body.
func routingRequest(
  _ method: String = "GET", _ url: String, headers: [String: String] = [:], body: Data? = nil
) -> URLRequest {
  guard let parsed = URL(string: url) else {
    Issue.record("The test's URL \"\(url)\" does not parse.")
    return URLRequest(url: URL(fileURLWithPath: "/invalid-test-url"))
  }
  var request = URLRequest(url: parsed)
  request.httpMethod = method
  for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
  request.httpBody = body
  return request
}

/// What one completion handler received.
struct RoutedAnswer: Sendable {
  var data: Data?
  var response: HTTPURLResponse?
  var error: (any Error)?
  /// Whether the handler ran at all.
  var delivered = false

  var status: Int? { response?.statusCode }
  var text: String? { data.map { String(decoding: $0, as: UTF8.self) } }
  var urlErrorCode: URLError.Code? { (error as? URLError)?.code }

  func header(_ name: String) -> String? { response?.value(forHTTPHeaderField: name) }
}

extension Shared where Value == RoutedAnswer {
  /// A completion handler that keeps what it is given, from any thread.
  var handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void {
    { data, response, error in
      self.withLock {
        $0 = RoutedAnswer(
          data: data, response: response as? HTTPURLResponse, error: error, delivered: true)
      }
    }
  }
}

/// Sends `request` through `session` and returns what the handler got. Doubles with no delay
/// deliver inside `resume()`, so the answer is there when this returns.
@discardableResult
func route(_ session: some HTTPSession, _ request: URLRequest) -> RoutedAnswer {
  let box = Shared(RoutedAnswer())
  session.dataTask(with: request, completionHandler: box.handler).resume()
  return box.current
}

/// Sends a request with `method` to `url` through `session`; see ``route(_:_:)``.
@discardableResult
func route(
  _ session: some HTTPSession, _ method: String, _ url: String, headers: [String: String] = [:],
  body: Data? = nil
) -> RoutedAnswer {
  route(session, routingRequest(method, url, headers: headers, body: body))
}

/// The issue's comments: the message the double wrote.
func issueComment(_ issue: Issue) -> String {
  issue.comments.map(\.rawValue).joined(separator: "\n")
}
