import Foundation

/// A parsed request pattern: a path template such as `/users/{login}`, or an absolute URL
/// template such as `https://api.example.com/repos/{owner}/{repo}?state=open`.
struct URLPattern: Sendable {
  /// One path segment of a template.
  enum Segment: Sendable, Equatable {
    /// Matches exactly this text (percent-decoded).
    case literal(String)
    /// Matches any non-empty text between `prefix` and `suffix`, captured as `name`.
    case parameter(name: String, prefix: String, suffix: String)
  }

  /// Why a pattern cannot be parsed.
  struct ParseError: Error, Sendable, Equatable {
    var reason: String
  }

  let source: String
  let scheme: String?
  let host: String?
  let port: Int?
  /// The path's segments; a trailing slash is a final empty literal.
  let segments: [Segment]
  /// Items the request's query must contain; a `nil` value means any value.
  let query: [(name: String, value: String?)]

  /// The whole decoded path when every segment is literal (and none holds a `/`), for the
  /// exact-path index; `nil` for templates.
  let literalPath: String?

  private static func literalPath(of segments: [Segment]) -> String? {
    var parts: [String] = []
    for segment in segments {
      guard case .literal(let text) = segment, !text.utf8.contains(UInt8(ascii: "/")) else {
        return nil
      }
      parts.append(text)
    }
    return "/" + parts.joined(separator: "/")
  }

  init(parsing source: String) throws(ParseError) {
    self.source = source
    if source.isEmpty {
      throw ParseError(reason: "the pattern is empty; use \"/\" for the root, or .any")
    }
    var rest = Substring(source)
    if let fragment = rest.firstIndex(of: "#") {
      throw ParseError(
        reason: "a fragment (\(rest[fragment...])) is never sent with a request; remove it")
    }
    var scheme: String?
    var host: String?
    var port: Int?
    // A path may hold "://" too, in its query (/redirect?to=https://example.com).
    if rest.first != "/", let separator = rest.range(of: "://") {
      let schemeText = rest[..<separator.lowerBound]
      guard !schemeText.isEmpty,
        schemeText.allSatisfy({ $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." })
      else {
        throw ParseError(reason: "\"\(schemeText)\" is not a URL scheme")
      }
      scheme = schemeText.lowercased()
      rest = rest[separator.upperBound...]
      let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
      var authority = rest[..<authorityEnd]
      rest = rest[authorityEnd...]
      if let at = authority.lastIndex(of: "@") {
        authority = authority[authority.index(after: at)...]
      }
      if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
        let portText = authority[authority.index(after: colon)...]
        guard let value = Int(portText), (0...65_535).contains(value) else {
          throw ParseError(reason: "\"\(portText)\" is not a port number")
        }
        port = value
        authority = authority[..<colon]
      }
      guard !authority.isEmpty else { throw ParseError(reason: "the URL has no host") }
      if authority.contains("{") || authority.contains("}") {
        throw ParseError(reason: "parameters are allowed in the path only, not in the host")
      }
      // `URL.host` gives an IPv6 address without its brackets; so does the pattern.
      if authority.hasPrefix("["), authority.hasSuffix("]") {
        authority = authority.dropFirst().dropLast()
      }
      // Compared percent-decoded, as `URL.host` gives it.
      host = Self.decode(authority).lowercased()
      if rest.isEmpty || rest.first == "?" { rest = "/" + rest }
    } else if rest.first != "/" {
      throw ParseError(
        reason: "a pattern is a path starting with \"/\" (such as /users/{login}) or an "
          + "absolute URL (such as https://api.example.com/users/{login})")
    }
    self.scheme = scheme
    self.host = host
    self.port = port

    let pathEnd = rest.firstIndex(of: "?") ?? rest.endIndex
    let path = rest[..<pathEnd]
    let queryText = pathEnd < rest.endIndex ? rest[rest.index(after: pathEnd)...] : nil
    segments = try Self.parseSegments(path)
    literalPath = Self.literalPath(of: segments)
    query = try Self.parseQuery(queryText)
  }

  private static func parseSegments(_ path: Substring) throws(ParseError) -> [Segment] {
    // `path` starts with "/"; "/" alone is one empty segment, as a request's root path is.
    let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    var segments: [Segment] = []
    segments.reserveCapacity(parts.count)
    var names: Set<String> = []
    for (index, part) in parts.enumerated() {
      if part.isEmpty && index != parts.count - 1 {
        throw ParseError(
          reason: "segment \(index + 1) of the path is empty (\"//\"); a request path never "
            + "matches that")
      }
      let segment = try parseSegment(part, number: index + 1)
      if case .parameter(let name, _, _) = segment {
        guard names.insert(name).inserted else {
          throw ParseError(reason: "the parameter {\(name)} appears twice")
        }
      }
      segments.append(segment)
    }
    return segments
  }

  private static func parseSegment(_ part: Substring, number: Int) throws(ParseError) -> Segment {
    guard let open = part.firstIndex(of: "{") else {
      if part.contains("}") {
        throw ParseError(reason: "segment \(number) (\(part)) has a \"}\" with no \"{\" before it")
      }
      return .literal(decode(part))
    }
    if part[..<open].contains("}") {
      throw ParseError(reason: "segment \(number) (\(part)) has a \"}\" with no \"{\" before it")
    }
    let afterOpen = part.index(after: open)
    guard let close = part[afterOpen...].firstIndex(of: "}") else {
      throw ParseError(reason: "segment \(number) (\(part)) has an unclosed \"{\"")
    }
    let name = part[afterOpen..<close]
    if name.isEmpty {
      throw ParseError(reason: "segment \(number) (\(part)) has an empty parameter name \"{}\"")
    }
    guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
    else {
      throw ParseError(
        reason: "the parameter name \"\(name)\" in segment \(number) may use only ASCII "
          + "letters, digits, \"_\" and \"-\"")
    }
    let suffix = part[part.index(after: close)...]
    if suffix.contains("{") || suffix.contains("}") {
      throw ParseError(
        reason: "segment \(number) (\(part)) has more than one parameter; a parameter fills "
          + "the text of one segment between an optional prefix and suffix")
    }
    return .parameter(
      name: String(name), prefix: decode(part[..<open]), suffix: decode(suffix))
  }

  private static func parseQuery(_ text: Substring?) throws(ParseError) -> [(
    name: String, value: String?
  )] {
    guard let text, !text.isEmpty else { return [] }
    var items: [(name: String, value: String?)] = []
    for pair in text.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = decode(parts[0])
      if name.isEmpty { throw ParseError(reason: "the query item \"\(pair)\" has no name") }
      if pair.contains("{") || pair.contains("}") {
        throw ParseError(reason: "parameters are allowed in the path only, not in the query")
      }
      // Values read as requests' do: `+` is a space (form encoding), then percent-decoding.
      let value = parts.count > 1 ? decode(Substring(parts[1].replacing("+", with: " "))) : nil
      items.append((name, value))
    }
    return items
  }

  static func decode(_ text: Substring) -> String {
    guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
    return text.removingPercentEncoding ?? String(text)
  }

  /// The path as written, such as `/users/{login}`.
  var pathDescription: String {
    "/"
      + segments.map { segment in
        switch segment {
        case .literal(let text): return text
        case .parameter(let name, let prefix, let suffix): return "\(prefix){\(name)}\(suffix)"
        }
      }.joined(separator: "/")
  }
}
