import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How the mock follows a redirect, as URLSession does: 301, 302, 303, 307 and 308 with a
/// `Location` lead to a follow-up request; 303 (and 301 or 302 after a POST) turns into a GET
/// without a body; at most ``maximumHops`` hops.
enum Redirect {
  static let maximumHops = 16

  /// The follow-up request for `answer` to `request`, or `nil` when it is not a redirect.
  static func request(following answer: Answer, to request: URLRequest) -> URLRequest? {
    guard answer.error == nil, let http = answer.response as? HTTPURLResponse,
      [301, 302, 303, 307, 308].contains(http.statusCode),
      let location = http.value(forHTTPHeaderField: "Location"),
      let target = URL(string: location, relativeTo: request.url)?.absoluteURL
    else { return nil }
    var next = request
    next.url = target
    let method = (request.httpMethod ?? "GET").uppercased()
    if http.statusCode == 303 || ([301, 302].contains(http.statusCode) && method == "POST") {
      if method != "HEAD" { next.httpMethod = "GET" }
      next.httpBody = nil
      next.setValue(nil, forHTTPHeaderField: "Content-Type")
      next.setValue(nil, forHTTPHeaderField: "Content-Length")
    }
    return next
  }
}
