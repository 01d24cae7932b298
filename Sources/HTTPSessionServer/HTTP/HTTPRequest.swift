import Foundation

/// A request as the parser read it off the wire: the head and the whole body.
package struct HTTPRequest: Sendable, Equatable {
  /// The method, exactly as sent (`GET`, `POST`, ...).
  package var method: String
  /// The request target: `/path?query`, or an absolute `http://host/path` URL.
  package var target: String
  /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
  package var minorVersion: Int
  /// The header fields in the order they were sent, values trimmed of surrounding whitespace.
  package var headers: [(name: String, value: String)]
  /// The body, decoded from chunked transfer encoding if it was chunked.
  package var body: Data

  /// The first value of the header `name`, compared without regard to case.
  package func value(of name: String) -> String? {
    headers.first { Self.sameName($0.name, name) }?.value
  }

  /// Whether the connection stays open after the answer: HTTP/1.1 unless `Connection: close`,
  /// HTTP/1.0 only with `Connection: keep-alive`.
  package var keepsAlive: Bool {
    let tokens = Self.connectionTokens(headers)
    if minorVersion == 0 { return tokens.contains("keep-alive") }
    return !tokens.contains("close")
  }

  /// Whether the client waits for `100 Continue` before it sends the body.
  package var expectsContinue: Bool {
    value(of: "Expect")?.lowercased() == "100-continue" && minorVersion >= 1
  }

  /// The path and query of the target, `/` when the target is `*` or an absolute URL with no
  /// path.
  package var pathAndQuery: String {
    if target.hasPrefix("/") { return target }
    if target == "*" { return "/" }
    // An absolute URL: skip "scheme://authority".
    guard let schemeEnd = target.range(of: "://") else { return "/" }
    let rest = target[schemeEnd.upperBound...]
    guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
    let tail = String(rest[slash...])
    return tail.hasPrefix("?") ? "/" + tail : tail
  }

  static func connectionTokens(_ headers: [(name: String, value: String)]) -> Set<String> {
    var tokens = Set<String>()
    for field in headers where sameName(field.name, "Connection") {
      for token in field.value.split(separator: ",") {
        tokens.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
      }
    }
    return tokens
  }

  /// Whether two header names are equal without regard to ASCII case (names are tokens, so
  /// ASCII is all there is); cheaper than Foundation's `caseInsensitiveCompare` on the hot path.
  package static func sameName(_ lhs: String, _ rhs: String) -> Bool {
    var left = lhs.utf8.makeIterator()
    var right = rhs.utf8.makeIterator()
    while true {
      switch (left.next(), right.next()) {
      case (nil, nil): return true
      case (let a?, let b?):
        if a == b { continue }
        let foldedA = a >= 65 && a <= 90 ? a + 32 : a
        let foldedB = b >= 65 && b <= 90 ? b + 32 : b
        if foldedA != foldedB { return false }
      default: return false
      }
    }
  }

  package static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
    lhs.method == rhs.method && lhs.target == rhs.target && lhs.minorVersion == rhs.minorVersion
      && lhs.headers.map(\.name) == rhs.headers.map(\.name)
      && lhs.headers.map(\.value) == rhs.headers.map(\.value) && lhs.body == rhs.body
  }
}
