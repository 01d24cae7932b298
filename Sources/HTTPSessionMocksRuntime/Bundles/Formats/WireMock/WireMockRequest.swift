import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A WireMock mapping's method and URL rules, as WireMock 2.35 applies them:
///
/// - `method` compares exactly (case counts; `GET` does not answer `HEAD`); none, or `ANY`,
///   accepts every method;
/// - `url` is the path and query exactly as sent (percent-encoded, query order counts);
///   `urlPath` the path alone, exactly (a trailing slash counts); `urlPathPattern` and
///   `urlPattern` regular expressions that must match the whole path, or path and query;
///   `urlPathTemplate` (WireMock 3) a path whose `{name}` segments match any one segment, each
///   tested by its `pathParameters` pattern.
struct WireMockRequest: RequestCondition, Equatable {
  var method: String?
  var url: URLRule
  /// `urlPathTemplate`'s `pathParameters`, by name.
  var pathParameters: [(name: String, pattern: ValuePattern)] = []

  enum URLRule: Sendable, Equatable {
    case any
    case url(String)
    case urlPath(String)
    case urlPathPattern(String, Regex)
    case urlPattern(String, Regex)
    /// The template and its segments: `nil` for a `{name}` segment, with the names beside.
    case urlPathTemplate(String, segments: [String?], names: [String])

    /// The member of a mapping's request that holds the rule, and its text.
    var member: (key: String, value: String)? {
      switch self {
      case .any: return nil
      case .url(let text): return ("url", text)
      case .urlPath(let text): return ("urlPath", text)
      case .urlPathPattern(let text, _): return ("urlPathPattern", text)
      case .urlPattern(let text, _): return ("urlPattern", text)
      case .urlPathTemplate(let text, _, _): return ("urlPathTemplate", text)
      }
    }
  }

  /// A compiled regular expression, compared by its source.
  struct Regex: Sendable, Equatable {
    let regex: NSRegularExpression
    let source: String

    init?(_ source: String) {
      guard let regex = try? NSRegularExpression(pattern: "^(?:" + source + ")$") else {
        return nil
      }
      self.regex = regex
      self.source = source
    }

    /// Whether the whole of `text` matches, within the request's match budget.
    func matches(_ text: String) -> Bool {
      MatchBudget.search(regex, in: text, source: source)
    }

    static func == (lhs: Regex, rhs: Regex) -> Bool { lhs.regex.pattern == rhs.regex.pattern }
  }

  static func == (lhs: WireMockRequest, rhs: WireMockRequest) -> Bool {
    lhs.method == rhs.method && lhs.url == rhs.url
      && lhs.pathParameters.count == rhs.pathParameters.count
      && zip(lhs.pathParameters, rhs.pathParameters).allSatisfy {
        $0.name == $1.name && $0.pattern == $1.pattern
      }
  }

  /// A regular expression may backtrack for long: the router matches it outside its lock.
  var mayRunLong: Bool {
    switch url {
    case .urlPathPattern, .urlPattern: return true
    default: return pathParameters.contains { $0.pattern.mayRunLong }
    }
  }

  /// `GET urlPath /orders`, as reports name the mapping's request.
  var description: String {
    let method = self.method ?? "ANY"
    guard let (key, value) = url.member else { return "\(method) any URL" }
    return "\(method) \(key) \(value)"
  }

  /// The path and query of the request as sent: WireMock's "url".
  static func pathAndQuery(_ facts: RequestFacts) -> String {
    guard let query = facts.url?.query(percentEncoded: true) else { return facts.rawPath }
    return facts.rawPath + "?" + query
  }

  func compare(_ facts: RequestFacts, into result: inout RequestMatcher.Evaluation) {
    let sent = facts.request.httpMethod ?? "GET"
    if let method, method != sent {
      result.miss("method: expected \(method) (exactly), got \(sent)")
    }
    switch url {
    case .any: break
    case .url(let expected):
      let actual = Self.pathAndQuery(facts)
      if actual != expected {
        result.miss("url: expected \(expected) (path and query exactly), got \(actual)", weight: 2)
      }
    case .urlPath(let expected):
      if facts.rawPath != expected {
        result.miss("urlPath: expected \(expected) (exactly), got \(facts.rawPath)", weight: 2)
      }
    case .urlPathPattern(let source, let regex):
      if !regex.matches(facts.rawPath) {
        result.miss(
          "urlPathPattern: \(facts.rawPath) does not match /\(source)/ (whole)", weight: 2)
      }
    case .urlPattern(let source, let regex):
      let actual = Self.pathAndQuery(facts)
      if !regex.matches(actual) {
        result.miss("urlPattern: \(actual) does not match /\(source)/ (whole)", weight: 2)
      }
    case .urlPathTemplate(let template, let segments, let names):
      let actual = facts.segments
      guard actual.count == segments.count,
        zip(segments, actual).allSatisfy({ $0 == nil || $0 == $1 })
      else {
        result.miss("urlPathTemplate: \(facts.path) does not fit \(template)", weight: 2)
        return
      }
      var values: [String: String] = [:]
      var nameIndex = 0
      for (segment, value) in zip(segments, actual) where segment == nil {
        if nameIndex < names.count { values[names[nameIndex]] = value }
        nameIndex += 1
      }
      for (name, pattern) in pathParameters where !pattern.test(values[name]) {
        result.miss(
          "path parameter \(name): expected \(pattern), got \(values[name].map { "\"\($0)\"" } ?? "none")"
        )
      }
      if result.capturesParameters { result.parameters.merge(values) { $1 } }
    }
  }
}

extension WireMockRequest {
  /// The path of `url` (before its query) or `urlPath`, for the router's exact-path index: a
  /// request matches only when its path as sent is that text, so its decoded path is that text
  /// too when the text has no escapes. `nil` for a text with `%` (the decoded path could
  /// differ), `#` or a `?` in `urlPath`, or no leading `/`: such stubs are tried one by one.
  var indexPath: String? {
    let path: Substring
    switch url {
    case .url(let text): path = text.prefix { $0 != "?" }
    case .urlPath(let text):
      guard !text.contains("?") else { return nil }
      path = Substring(text)
    default: return nil
    }
    guard path.hasPrefix("/"), !path.contains("%"), !path.contains("#") else { return nil }
    return String(path)
  }
}
