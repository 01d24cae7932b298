import Foundation

/// A test of one value of a request (a header, a query parameter, a cookie or the body), as
/// WireMock's value patterns test them.
///
/// ```swift
/// mock.stub(.get("/orders").header("Accept", .contains("json")), with: .json(orders))
/// mock.stub(.get("/search").queryParameter("q", .matches("[a-z]+")), with: .json(results))
/// mock.stub(.post("/pay").body(.matchesJSONPath("$.items[?(@.sku == 'A1')]")), with: .status(200))
/// mock.stub(.post("/users").body(.equalToJSON(#"{"name": "${json-unit.any-string}"}"#,
///   ignoringExtraElements: true)), with: .status(201))
/// mock.verify(.get("/me") && .header("X-Debug", .absent), called: .once)
/// ```
///
/// A value the request lacks (a header it does not send) matches only ``absent``,
/// ``doesNotMatch(_:)`` and ``doesNotContain(_:)``, as in WireMock. A value sent several times (`?tag=a&tag=b`) matches
/// when one of them does. ``matches(_:)-type.method`` and ``doesNotMatch(_:)`` test the whole value, like
/// Java's `String.matches`. A pattern that is malformed (a regular expression that does not
/// compile, JSON that does not parse, a JSONPath outside the subset) never matches, and the
/// double reports it where it is used, as ``RequestMatcher/problems`` lists it.
public struct ValuePattern: Sendable, Equatable, CustomStringConvertible {
  indirect enum Rule: Sendable {
    case equalTo(String, caseInsensitive: Bool)
    case contains(String)
    case doesNotContain(String)
    case matches(String, NSRegularExpression)
    case doesNotMatch(String, NSRegularExpression)
    case absent
    case equalToJSON(JSONValue, JSONEquivalence)
    case jsonPath(JSONPath, ValuePattern?)
    case and([ValuePattern])
    case or([ValuePattern])
    case invalid(String)
  }

  let rule: Rule

  init(_ rule: Rule) {
    self.rule = rule
  }

  /// The value is `value`, exactly or ignoring case.
  public static func equalTo(_ value: String, caseInsensitive: Bool = false) -> ValuePattern {
    ValuePattern(.equalTo(value, caseInsensitive: caseInsensitive))
  }

  /// The value contains `text`.
  public static func contains(_ text: String) -> ValuePattern {
    ValuePattern(.contains(text))
  }

  /// The value is missing, or does not contain `text`.
  public static func doesNotContain(_ text: String) -> ValuePattern {
    ValuePattern(.doesNotContain(text))
  }

  /// The whole value matches the regular expression `regex`.
  public static func matches(_ regex: String) -> ValuePattern {
    compiled(regex).map { ValuePattern(.matches(regex, $0)) }
      ?? ValuePattern(.invalid(invalidRegex(regex)))
  }

  /// The value is missing, or the whole of it does not match the regular expression `regex`.
  public static func doesNotMatch(_ regex: String) -> ValuePattern {
    compiled(regex).map { ValuePattern(.doesNotMatch(regex, $0)) }
      ?? ValuePattern(.invalid(invalidRegex(regex)))
  }

  /// The request does not have the value at all.
  public static var absent: ValuePattern { ValuePattern(.absent) }

  /// The value is JSON equal to the JSON text `json` (numbers by value, any key order), with
  /// json-unit's placeholders such as `"${json-unit.any-string}"` (WireMock's `equalToJson`).
  ///
  /// With `ignoringArrayOrder`, arrays may hold their items in any order; with
  /// `ignoringExtraElements`, objects may have more members and arrays more items.
  public static func equalToJSON(
    _ json: String, ignoringArrayOrder: Bool = false, ignoringExtraElements: Bool = false
  ) -> ValuePattern {
    guard let value = try? JSONValue(parsing: Data(json.utf8)) else {
      return ValuePattern(
        .invalid("The JSON given to equalToJSON(_:) does not parse: \(json.prefix(200))."))
    }
    return ValuePattern(
      .equalToJSON(
        value,
        JSONEquivalence(
          ignoresArrayOrder: ignoringArrayOrder, ignoresExtraElements: ignoringExtraElements)))
  }

  /// The value is JSON in which the JSONPath `expression` selects something (not `null`, not
  /// an empty array or object), and, with a `pattern`, something that `pattern` matches.
  ///
  /// The subset of JSONPath read: `$`, `.name` and `['name']`, indexes (`[0]`, `[-1]`,
  /// `[0,2]`, `[1:3]`), wildcards (`.*`, `[*]`), `..name` and filters such as
  /// `[?(@.price < 10 && @.sku == 'A1')]`, `[?(@.tag)]` and `[?(@.name =~ /a.*/)]`. A
  /// selected string is tested as it is, a number or `true`/`false` as its JSON text, an
  /// object or array as compact JSON; when the path selects several values, one must match.
  public static func matchesJSONPath(_ expression: String, _ pattern: ValuePattern? = nil)
    -> ValuePattern
  {
    do {
      return ValuePattern(.jsonPath(try JSONPath(parsing: expression), pattern))
    } catch {
      return ValuePattern(
        .invalid("The JSONPath \"\(expression)\" is not one this package reads: \(error.reason)."))
    }
  }

  /// Every one of `patterns` matches.
  public static func and(_ patterns: [ValuePattern]) -> ValuePattern {
    ValuePattern(.and(patterns))
  }

  /// At least one of `patterns` matches.
  public static func or(_ patterns: [ValuePattern]) -> ValuePattern {
    ValuePattern(.or(patterns))
  }

  /// Both patterns match.
  public static func && (lhs: ValuePattern, rhs: ValuePattern) -> ValuePattern {
    .and([lhs, rhs])
  }

  /// Either pattern matches.
  public static func || (lhs: ValuePattern, rhs: ValuePattern) -> ValuePattern {
    .or([lhs, rhs])
  }

  private static func compiled(_ regex: String) -> NSRegularExpression? {
    try? NSRegularExpression(pattern: "^(?:" + regex + ")$", options: [.dotMatchesLineSeparators])
  }

  private static func invalidRegex(_ regex: String) -> String {
    "The regular expression /\(regex)/ does not compile (NSRegularExpression rejects it); check "
      + "its brackets, parentheses, quantifiers and escapes."
  }

  /// What is wrong with this pattern; empty when it is well formed.
  public var problems: [String] {
    switch rule {
    case .invalid(let message): return [message]
    case .jsonPath(_, let inner?): return inner.problems
    case .and(let list), .or(let list): return list.flatMap(\.problems)
    default: return []
    }
  }

  // MARK: - Matching

  /// Whether testing a value may take long: a regular expression, a JSONPath, JSON to parse.
  var mayRunLong: Bool {
    switch rule {
    case .matches, .doesNotMatch, .equalToJSON, .jsonPath: return true
    case .and(let list), .or(let list): return list.contains(where: \.mayRunLong)
    case .equalTo, .contains, .doesNotContain, .absent, .invalid: return false
    }
  }

  /// Whether `value` (`nil`: the request lacks it) matches.
  public func matches(_ value: String?) -> Bool {
    test(value)
  }

  func test(_ value: String?) -> Bool {
    switch rule {
    case .absent: return value == nil
    case .doesNotContain(let text):
      guard let value else { return true }
      return !value.contains(text)
    case .doesNotMatch(let source, let regex):
      guard let value else { return true }
      return !MatchBudget.search(regex, in: value, source: source)
    case .and(let list): return list.allSatisfy { $0.test(value) }
    case .or(let list): return list.contains { $0.test(value) }
    case .invalid: return false
    default: break
    }
    guard let value else { return false }
    switch rule {
    case .equalTo(let expected, let caseInsensitive):
      return caseInsensitive ? value.lowercased() == expected.lowercased() : value == expected
    case .contains(let text): return value.contains(text)
    case .matches(let source, let regex):
      return MatchBudget.search(regex, in: value, source: source)
    case .equalToJSON(let expected, let options):
      guard let actual = try? JSONValue(parsing: Data(value.utf8)) else { return false }
      return options.difference(expected: expected, actual: actual) == nil
    case .jsonPath(let path, let inner):
      guard let document = try? JSONValue(parsing: Data(value.utf8)) else {
        // WireMock's JSONPath reads text that is not JSON as one string (json-smart's
        // permissive mode), where `$.items` finds nothing: `absent` holds; an empty body it
        // cannot read at all, and nothing matches (measured on 2.35.1).
        guard !value.isEmpty else { return false }
        return Self.test(path, inner, .string(value))
      }
      return Self.test(path, inner, document)
    default: return false
    }
  }

  /// `matchesJsonPath` on a parsed document.
  static func test(_ path: JSONPath, _ inner: ValuePattern?, _ document: JSONValue) -> Bool {
    let selected = path.select(in: document)
    guard let inner else {
      return selected.contains { value in
        switch value {
        case .null: return false
        case .array(let items): return !items.isEmpty || !path.isDefinite
        case .object(let members): return !members.isEmpty || !path.isDefinite
        default: return true
        }
      }
    }
    if selected.isEmpty { return inner.test(nil) }
    if case .equalToJSON(let expected, let options) = inner.rule {
      return selected.contains { options.difference(expected: expected, actual: $0) == nil }
    }
    return selected.contains { inner.test(Self.text(of: $0)) }
  }

  /// A selected value as WireMock tests it against a nested pattern.
  static func text(of value: JSONValue) -> String? {
    switch value {
    case .null: return nil
    case .string(let text): return text
    case .integer(let number): return String(number)
    case .double(let number): return String(number)
    case .bool(let flag): return String(flag)
    case .array, .object: return String(decoding: JSONWriter.compact(value), as: UTF8.self)
    }
  }

  // MARK: - Describing and comparing

  /// The pattern in WireMock's words: `contains "json"`, `matches /[a-z]+/`, `absent`.
  public var description: String {
    switch rule {
    case .equalTo(let value, let caseInsensitive):
      return "equalTo\(caseInsensitive ? " (any case)" : "") \(JSONValue.string(value))"
    case .contains(let text): return "contains \(JSONValue.string(text))"
    case .doesNotContain(let text): return "doesNotContain \(JSONValue.string(text))"
    case .matches(let source, _): return "matches /\(source)/"
    case .doesNotMatch(let source, _): return "doesNotMatch /\(source)/"
    case .absent: return "absent"
    case .equalToJSON(let value, let options):
      var flags: [String] = []
      if options.ignoresArrayOrder { flags.append("ignoring array order") }
      if options.ignoresExtraElements { flags.append("ignoring extra elements") }
      return "equalToJson \(value.shortDescription)"
        + (flags.isEmpty ? "" : " (" + flags.joined(separator: ", ") + ")")
    case .jsonPath(let path, let inner):
      return "matchesJsonPath \(path.source)" + (inner.map { " (\($0))" } ?? "")
    case .and(let list): return "(" + list.map(\.description).joined(separator: " and ") + ")"
    case .or(let list): return "(" + list.map(\.description).joined(separator: " or ") + ")"
    case .invalid(let message): return message
    }
  }

  /// Whether both patterns test the same way (regular expressions and paths by their source).
  public static func == (lhs: ValuePattern, rhs: ValuePattern) -> Bool {
    switch (lhs.rule, rhs.rule) {
    case (.equalTo(let a, let x), .equalTo(let b, let y)): return a == b && x == y
    case (.contains(let a), .contains(let b)), (.doesNotContain(let a), .doesNotContain(let b)):
      return a == b
    case (.matches(let a, _), .matches(let b, _)): return a == b
    case (.doesNotMatch(let a, _), .doesNotMatch(let b, _)): return a == b
    case (.absent, .absent): return true
    case (.equalToJSON(let a, let x), .equalToJSON(let b, let y)): return a == b && x == y
    case (.jsonPath(let a, let x), .jsonPath(let b, let y)): return a == b && x == y
    case (.and(let a), .and(let b)), (.or(let a), .or(let b)): return a == b
    case (.invalid(let a), .invalid(let b)): return a == b
    default: return false
    }
  }
}
