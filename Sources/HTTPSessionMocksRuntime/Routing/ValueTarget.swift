import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Which value of a request a ``ValuePattern`` tests, and how it is read.
enum ValueTarget: Sendable, Equatable {
  /// A header, by name in any case.
  case header(String)
  /// A query parameter, by name exactly (WireMock's rule); each of its values.
  case query(String)
  /// A cookie of the `Cookie` header, by name exactly.
  case cookie(String)
  /// The body as UTF-8 text (empty when there is none).
  case body

  static func == (lhs: ValueTarget, rhs: ValueTarget) -> Bool {
    switch (lhs, rhs) {
    case (.header(let a), .header(let b)): return a.caseInsensitiveCompare(b) == .orderedSame
    case (.query(let a), .query(let b)), (.cookie(let a), .cookie(let b)): return a == b
    case (.body, .body): return true
    default: return false
    }
  }

  /// `header Accept`, `query q`, `cookie session`, `body`.
  var name: String {
    switch self {
    case .header(let name): return "header \(name)"
    case .query(let name): return "query \(name)"
    case .cookie(let name): return "cookie \(name)"
    case .body: return "body"
    }
  }

  func text(_ pattern: ValuePattern) -> ReportText {
    ReportText("\(name) \(pattern)")
  }

  /// The request's values for this target; empty when it lacks them.
  func values(in facts: RequestFacts) -> [String] {
    switch self {
    case .header(let name):
      return facts.header(name).map { [$0] } ?? []
    case .query(let name):
      return facts.queryItems.filter { $0.name == name }.map { $0.value ?? "" }
    case .cookie(let name):
      guard let header = facts.header("Cookie") else { return [] }
      return header.split(separator: ";").compactMap { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts[0].trimmingCharacters(in: .whitespaces) == name else { return nil }
        return parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
      }
    case .body:
      return [String(decoding: facts.request.httpBody ?? Data(), as: UTF8.self)]
    }
  }

  /// Adds to `result` how the request's value differs from `pattern`.
  func compare(
    _ pattern: ValuePattern, _ facts: RequestFacts, into result: inout RequestMatcher.Evaluation
  ) {
    let values = values(in: facts)
    if values.isEmpty {
      if !pattern.test(nil) { result.miss("\(name): expected \(pattern), got none") }
      return
    }
    if case .body = self, case .jsonPath(let path, let inner) = pattern.rule,
      case .success(let document)? = facts.jsonBody
    {
      // The body parsed once for every JSON matcher of the request.
      if !ValuePattern.test(path, inner, document) {
        result.miss("body: expected \(pattern), got \(BodyText(facts.request.httpBody ?? Data()))")
      }
      return
    }
    if values.contains(where: { pattern.test($0) }) { return }
    if case .header(let header) = self, (result.redaction ?? .default).masks(header) {
      result.miss("\(name): differs (expected \(pattern.rule.kind); values masked)")
      return
    }
    let shown: String
    if case .body = self {
      shown = BodyText(facts.request.httpBody ?? Data()).description
    } else {
      shown = values.map { JSONValue.string($0).shortDescription }.joined(separator: ", ")
    }
    result.miss("\(name): expected \(pattern), got \(shown)")
  }
}

extension ValuePattern.Rule {
  /// The kind of test, without its value: for reports that mask values.
  var kind: String {
    switch self {
    case .equalTo: return "equalTo"
    case .contains: return "contains"
    case .doesNotContain: return "doesNotContain"
    case .matches: return "matches"
    case .doesNotMatch: return "doesNotMatch"
    case .absent: return "absent"
    case .equalToJSON: return "equalToJson"
    case .jsonPath: return "matchesJsonPath"
    case .and: return "and"
    case .or: return "or"
    case .invalid: return "invalid"
    }
  }
}
