import Foundation
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Reads WireMock request patterns for the admin API.
enum AdminPatterns {
  /// A stand-in until the WireMock format reads patterns: `method` and `url` only.
  static func matcher(json data: Data, source: String) throws -> RequestMatcher {
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw AdminCall.BodyError("\(source): the pattern must be a JSON object")
    }
    let method = object["method"] as? String
    let url = object["url"] as? String
    return RequestMatcher("\(method ?? "ANY") \(url ?? "any URL")") { request in
      if let method, method != "ANY", request.httpMethod ?? "GET" != method { return false }
      guard let url else { return true }
      guard let requestURL = request.url,
        let parts = URLComponents(url: requestURL, resolvingAgainstBaseURL: false)
      else { return false }
      var target = parts.percentEncodedPath
      if let query = parts.percentEncodedQuery { target += "?" + query }
      return target == url
    }
  }
}
