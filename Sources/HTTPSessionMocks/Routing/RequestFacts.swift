import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The parts of a request that matchers compare, each worked out once and only when a matcher
/// asks: routing a request to an exact-path stub never splits its path.
final class RequestFacts {
  let request: URLRequest
  let method: String
  let url: URL?
  /// The path as sent, percent-encoded; the root path is `/`.
  let rawPath: String

  init(_ request: URLRequest) {
    self.request = request
    method = Self.normalizedMethod(request.httpMethod)
    url = request.url
    let path = request.url?.path(percentEncoded: true) ?? ""
    rawPath = path.isEmpty ? "/" : path
  }

  /// Percent-decoded path segments; the root path is one empty segment.
  lazy var segments: [String] = Self.segments(of: rawPath)

  /// The decoded path as one string, for the exact-path index: the raw path when it has no
  /// escapes, else the decoded segments joined, or `nil` when a decoded segment holds a `/`
  /// (then only the segment-by-segment comparison can tell).
  lazy var literalKey: String? = {
    guard rawPath.utf8.contains(UInt8(ascii: "%")) else { return rawPath }
    let decoded = segments
    if decoded.contains(where: { $0.utf8.contains(UInt8(ascii: "/")) }) { return nil }
    return "/" + decoded.joined(separator: "/")
  }()

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
