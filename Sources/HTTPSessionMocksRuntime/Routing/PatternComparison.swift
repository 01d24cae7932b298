/// Compares a request with a URL pattern, part by part, saying what differs.
enum PatternComparison {
  static func compare(
    _ pattern: URLPattern, _ facts: RequestFacts, into result: inout RequestMatcher.Evaluation
  ) {
    if let scheme = pattern.scheme, scheme != facts.scheme {
      result.miss("scheme: expected \(scheme), got \(facts.scheme ?? "none")")
    }
    if let host = pattern.host, host != facts.host {
      result.miss("host: expected \(host), got \(facts.host ?? "none")", weight: 2)
    }
    // An absolute pattern is bound to its port: the one it names, or its scheme's default.
    if pattern.host != nil, pattern.port != nil || facts.port != nil {
      let expected = pattern.port ?? defaultPort(pattern.scheme)
      let actual = facts.port ?? defaultPort(facts.scheme)
      if expected != actual {
        result.miss(
          "port: expected \(portText(pattern.port, expected)), got \(portText(facts.port, actual))")
      }
    }
    comparePath(pattern, facts, into: &result)
    compareQuery(pattern.query, facts, into: &result)
  }

  /// Matches segments alone; returns the parameters (none unless `capturing`), or `nil` if the
  /// path does not fit.
  static func matchSegments(
    _ pattern: [URLPattern.Segment], _ segments: [String], capturing: Bool = true
  ) -> [String: String]? {
    guard pattern.count == segments.count else { return nil }
    var parameters: [String: String] = [:]
    for (expected, actual) in zip(pattern, segments) {
      switch expected {
      case .literal(let text):
        if text != actual { return nil }
      case .parameter(let name, let prefix, let suffix):
        guard let value = capture(actual, prefix: prefix, suffix: suffix) else { return nil }
        if capturing { parameters[name] = value }
      }
    }
    return parameters
  }

  /// The text between `prefix` and `suffix` in `segment`, if it has both and something between.
  /// Compares UTF-8 bytes: both sides are percent-decoded the same way, and this runs for every
  /// parameter segment of every routed request.
  static func capture(_ segment: String, prefix: String, suffix: String) -> String? {
    if prefix.isEmpty && suffix.isEmpty { return segment.isEmpty ? nil : segment }
    let bytes = segment.utf8
    let prefixCount = prefix.utf8.count
    let suffixCount = suffix.utf8.count
    guard bytes.count > prefixCount + suffixCount, bytes.starts(with: prefix.utf8),
      bytes.suffix(suffixCount).elementsEqual(suffix.utf8)
    else { return nil }
    let start = bytes.index(bytes.startIndex, offsetBy: prefixCount)
    let end = bytes.index(bytes.endIndex, offsetBy: -suffixCount)
    return String(segment[start..<end])
  }

  private static func comparePath(
    _ pattern: URLPattern, _ facts: RequestFacts, into result: inout RequestMatcher.Evaluation
  ) {
    if let literal = pattern.literalPath, let key = facts.literalKey, literal == key { return }
    if let parameters = matchSegments(
      pattern.segments, facts.segments, capturing: result.capturesParameters)
    {
      if result.parameters.isEmpty {
        result.parameters = parameters
      } else {
        result.parameters.merge(parameters) { $1 }
      }
      return
    }
    let expected = pattern.pathDescription
    let actual = facts.path
    let expectedCount = pattern.segments.count
    let actualCount = facts.segments.count
    if actualCount == expectedCount + 1, facts.segments.last == "",
      matchSegments(pattern.segments, Array(facts.segments.dropLast())) != nil
    {
      result.miss("path: expected \(expected), got \(actual) (trailing slash)", weight: 1)
      return
    }
    if expectedCount == actualCount + 1, pattern.segments.last == .literal(""),
      matchSegments(Array(pattern.segments.dropLast()), facts.segments) != nil
    {
      result.miss("path: expected \(expected), got \(actual) (trailing slash)", weight: 1)
      return
    }
    var detail: String
    var differing = 0
    if expectedCount != actualCount {
      detail = "\(actualCount) segment(s), expected \(expectedCount)"
      differing = abs(expectedCount - actualCount)
    } else {
      detail = ""
      for (index, (segment, text)) in zip(pattern.segments, facts.segments).enumerated() {
        let fits: Bool
        switch segment {
        case .literal(let literal): fits = literal == text
        case .parameter(_, let prefix, let suffix):
          fits = capture(text, prefix: prefix, suffix: suffix) != nil
        }
        if !fits {
          differing += 1
          if detail.isEmpty {
            detail = "segment \(index + 1): expected \"\(describe(segment))\", got \"\(text)\""
          }
        }
      }
    }
    let fraction = Double(differing) / Double(max(expectedCount, actualCount, 1))
    result.miss("path: expected \(expected), got \(actual) (\(detail))", weight: 2 + fraction)
  }

  static func compareQuery(
    _ items: [(name: String, value: String?)], _ facts: RequestFacts,
    into result: inout RequestMatcher.Evaluation
  ) {
    for item in items {
      let values = facts.queryItems.filter { $0.name == item.name }.map { $0.value ?? "" }
      if values.isEmpty {
        result.miss("query: missing \(item.name)" + (item.value.map { "=\($0)" } ?? ""))
      } else if let expected = item.value, !values.contains(expected) {
        let got = values.map { "\(item.name)=\($0)" }.joined(separator: ", ")
        result.miss("query \(item.name): expected \(item.name)=\(expected), got \(got)")
      }
    }
  }

  private static func describe(_ segment: URLPattern.Segment) -> String {
    switch segment {
    case .literal(let text): return text
    case .parameter(let name, let prefix, let suffix): return "\(prefix){\(name)}\(suffix)"
    }
  }

  private static func portText(_ explicit: Int?, _ effective: Int?) -> String {
    if let explicit { return String(explicit) }
    return effective.map { "\($0) (the default)" } ?? "none"
  }

  static func defaultPort(_ scheme: String?) -> Int? {
    switch scheme {
    case "http", "ws": return 80
    case "https", "wss": return 443
    default: return nil
    }
  }
}
