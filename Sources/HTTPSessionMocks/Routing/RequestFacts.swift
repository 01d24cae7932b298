import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The parts of a request that matchers compare, parsed once per request.
struct RequestFacts {
  let request: URLRequest
  let method: String
  let url: URL?
  let scheme: String?
  let host: String?
  let port: Int?
  /// Percent-decoded path segments; the root path is one empty segment.
  let segments: [String]
  /// Percent-decoded query items, in order.
  let queryItems: [(name: String, value: String?)]

  init(_ request: URLRequest) {
    self.request = request
    method = (request.httpMethod ?? "GET").uppercased()
    url = request.url
    guard let url = request.url else {
      scheme = nil
      host = nil
      port = nil
      segments = [""]
      queryItems = []
      return
    }
    scheme = url.scheme?.lowercased()
    host = url.host?.lowercased()
    port = url.port
    let path = url.path(percentEncoded: true)
    // A relative or opaque URL's path ("users/1", "mailto:a@b") has no leading slash to drop.
    let parts =
      path.isEmpty
      ? [""]
      : (path.hasPrefix("/") ? path.dropFirst() : path[...]).split(
        separator: "/", omittingEmptySubsequences: false)
    segments = parts.map { URLPattern.decode($0) }
    if let query = url.query(percentEncoded: true), !query.isEmpty {
      queryItems = query.split(separator: "&").map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return (
          URLPattern.decode(parts[0]),
          parts.count > 1 ? URLPattern.decode(parts[1].replacing("+", with: " ")) : nil
        )
      }
    } else {
      queryItems = []
    }
  }

  /// The decoded path, such as `/users/octocat`.
  var path: String { "/" + segments.joined(separator: "/") }

  func header(_ name: String) -> String? {
    request.value(forHTTPHeaderField: name)
  }
}
