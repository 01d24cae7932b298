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
  /// The URL's percent-encoded path exactly as the URL gives it (a relative URL's may lack
  /// the leading `/`, and the root's may be empty).
  let pathAsGiven: String

  init(_ request: URLRequest) {
    self.request = request
    method = Self.normalizedMethod(request.httpMethod)
    // Read once: a request's URL getter copies it out of the Foundation object each time.
    let url = request.url
    self.url = url
    let path = url?.path(percentEncoded: true) ?? ""
    pathAsGiven = path
    // A relative URL's path may lack the leading "/"; routing compares absolute paths.
    rawPath = path.utf8.first == UInt8(ascii: "/") ? path : "/" + path
  }

  /// Percent-decoded path segments; the root path is one empty segment.
  lazy var segments: [String] = Self.segments(of: rawPath)

  /// The decoded path as one string, for the exact-path index: the raw path when it has no
  /// escapes, else the decoded segments joined, or `nil` when a decoded segment holds a `/`
  /// (then only the segment-by-segment comparison can tell).
  lazy var literalKey: String? = {
    guard Self.containsEscape(rawPath) else { return rawPath }
    let decoded = segments
    if decoded.contains(where: { $0.utf8.contains(UInt8(ascii: "/")) }) { return nil }
    return "/" + decoded.joined(separator: "/")
  }()

  /// Whether `path` holds a `%`, scanning its contiguous bytes (a native string's always are)
  /// rather than iterating its UTF-8 view one index at a time.
  static func containsEscape(_ path: String) -> Bool {
    let percent = UInt8(ascii: "%")
    return path.utf8.withContiguousStorageIfAvailable { $0.contains(percent) }
      ?? path.utf8.contains(percent)
  }

  /// Splits a percent-encoded path into decoded segments, scanning its bytes once.
  static func segments(of path: String) -> [String] {
    var path = path
    // Work on the path's contiguous UTF-8 bytes: slicing a String by UTF-8 offsets would check
    // every cut for scalar alignment, and this runs for every routed request.
    return path.withUTF8 { bytes -> [String] in
      guard !bytes.isEmpty else { return [""] }
      var segments: [String] = []
      segments.reserveCapacity(8)
      // A path from a relative URL may not start with "/": then its first segment starts at once.
      var start = bytes[0] == UInt8(ascii: "/") ? 1 : 0
      for index in start..<bytes.count where bytes[index] == UInt8(ascii: "/") {
        segments.append(decodedSegment(UnsafeBufferPointer(rebasing: bytes[start..<index])))
        start = index + 1
      }
      segments.append(decodedSegment(UnsafeBufferPointer(rebasing: bytes[start..<bytes.count])))
      return segments
    }
  }

  private static func decodedSegment(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    let text = String(decoding: bytes, as: UTF8.self)
    guard bytes.contains(UInt8(ascii: "%")) else { return text }
    return text.removingPercentEncoding ?? text
  }

  var scheme: String? { url?.scheme?.lowercased() }
  var host: String? { url?.host?.lowercased() }
  var port: Int? { url?.port }

  /// The body parsed as JSON, once for all the matchers that ask; `nil` when there is no body,
  /// or the parse error's description when it is not JSON.
  lazy var jsonBody: Result<JSONValue, ParseFailure>? = {
    guard let data = request.httpBody, !data.isEmpty else { return nil }
    do {
      return .success(try JSONValue(parsing: data))
    } catch {
      return .failure(ParseFailure())
    }
  }()

  /// Why a body is not JSON (the matchers report the body itself).
  struct ParseFailure: Error {}

  /// Percent-decoded query items, in order; `+` reads as a space in values.
  lazy var queryItems: [(name: String, value: String?)] = {
    guard let query = url?.query(percentEncoded: true), !query.isEmpty else { return [] }
    return query.split(separator: "&").map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      return (
        URLPattern.decode(parts[0]),
        parts.count > 1 ? URLPattern.decode(Substring(parts[1].replacing("+", with: " "))) : nil
      )
    }
  }()

  /// The decoded path, such as `/users/octocat`, for messages; the path as sent when a decoded
  /// segment holds a `/` (an encoded `%2F`), which decoding would hide.
  var path: String {
    if segments.contains(where: { $0.utf8.contains(UInt8(ascii: "/")) }) { return rawPath }
    return "/" + segments.joined(separator: "/")
  }

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
