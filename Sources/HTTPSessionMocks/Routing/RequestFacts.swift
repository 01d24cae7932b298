import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The parts of a request that matchers compare. The method and path segments, which routing
/// needs for every request, are parsed once; the rest is read when a matcher asks.
struct RequestFacts {
  let request: URLRequest
  let method: String
  let url: URL?
  /// Percent-decoded path segments; the root path is one empty segment.
  let segments: [String]

  init(_ request: URLRequest) {
    self.request = request
    method = Self.normalizedMethod(request.httpMethod)
    url = request.url
    guard let url = request.url else {
      segments = [""]
      return
    }
    segments = Self.segments(of: url.path(percentEncoded: true))
  }

  /// Splits a percent-encoded path into decoded segments, scanning its bytes once.
  static func segments(of path: String) -> [String] {
    let bytes = path.utf8
    guard !bytes.isEmpty else { return [""] }
    var segments: [String] = []
    var start = bytes.index(after: bytes.startIndex)
    var index = start
    while index < bytes.endIndex {
      if bytes[index] == UInt8(ascii: "/") {
        segments.append(URLPattern.decode(path[start..<index]))
        start = bytes.index(after: index)
      }
      index = bytes.index(after: index)
    }
    segments.append(URLPattern.decode(path[start..<bytes.endIndex]))
    return segments
  }

  var scheme: String? { url?.scheme?.lowercased() }
  var host: String? { url?.host?.lowercased() }
  var port: Int? { url?.port }

  /// Percent-decoded query items, in order; `+` reads as a space in values.
  var queryItems: [(name: String, value: String?)] {
    guard let query = url?.query(percentEncoded: true), !query.isEmpty else { return [] }
    return query.split(separator: "&").map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      return (
        URLPattern.decode(parts[0]),
        parts.count > 1 ? URLPattern.decode(Substring(parts[1].replacing("+", with: " "))) : nil
      )
    }
  }

  /// The decoded path, such as `/users/octocat`.
  var path: String { "/" + segments.joined(separator: "/") }

  func header(_ name: String) -> String? {
    request.value(forHTTPHeaderField: name)
  }

  /// The method in upper case, without allocating when it already is (as it almost always is).
  static func normalizedMethod(_ method: String?) -> String {
    guard let method else { return "GET" }
    if method.utf8.allSatisfy({ !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) {
      return method
    }
    return method.uppercased()
  }
}
