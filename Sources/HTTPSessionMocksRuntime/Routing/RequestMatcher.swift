import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Describes which requests a stub answers or a verification counts.
///
/// Build one from a static factory and refine it:
///
/// ```swift
/// mock.stub(.get("/users/{login}"), with: .json(user))
/// mock.stub(.post("/items").header("Authorization", "Bearer t").jsonBody(item), with: .status(201))
/// mock.verify(.get("/users/octocat") && !.header("Cookie"), called: .once)
/// ```
///
/// A pattern is a path (any scheme and host) or an absolute URL (bound to its scheme, host and
/// port); `{name}` matches the text of one path segment. A malformed pattern never matches
/// anything, and the double reports it as a test failure where it is used; ``problems`` lists
/// it. "Patterns" in <doc:MatchingAndVerifying> has every rule.
public struct RequestMatcher: Sendable, CustomStringConvertible {
  indirect enum Node: Sendable {
    case any
    case method(String)
    case pattern(URLPattern)
    /// One whole URL, exactly: a replayed HAR entry's.
    case exactURL(ExactURL)
    case regex(String, NSRegularExpression)
    case predicate(String, Predicate)
    case query([(name: String, value: String?)])
    case header(String, String?)
    case body(Data)
    case jsonBody(JSONValue)
    case all([Node])
    case either(Node, Node)
    case not(Node)
    case invalid(String)
    /// A rule of a file format, such as a MockingBird entry's own rules for method, URL and
    /// query.
    case condition(any RequestCondition)
    /// A value of the request (a header, a query parameter, a cookie, the body) tested by a
    /// ``ValuePattern``.
    case value(ValueTarget, ValuePattern)
  }

  /// A closure from the test, kept in an object so that a matcher that holds it equals itself
  /// (by identity) and no other.
  final class Predicate: Sendable {
    let test: @Sendable (URLRequest) -> Bool

    init(_ test: @escaping @Sendable (URLRequest) -> Bool) {
      self.test = test
    }
  }

  let node: Node

  /// What this matcher accepts, in pieces that reports render with their double's
  /// ``ReportRedaction``.
  let text: ReportText

  /// What this matcher accepts, such as `GET /users/{login}`, with the values of secret
  /// headers masked as ``ReportRedaction/default`` masks them.
  public var description: String { text.rendered(.default) }

  /// What this matcher accepts, with header values masked as `redaction` says.
  func description(redacting redaction: ReportRedaction) -> String {
    text.rendered(redaction)
  }

  init(_ node: Node, description: String) {
    self.init(node, text: ReportText(description))
  }

  init(_ node: Node, text: ReportText) {
    self.node = node
    self.text = text
  }

  /// A matcher from your own test: `description` names it in reports.
  ///
  /// ```swift
  /// let hasTraceID = RequestMatcher("has a trace id") { $0.value(forHTTPHeaderField: "X-Trace") != nil }
  /// mock.verify(.get("/users/octocat") && hasTraceID)
  /// ```
  public init(_ description: String, _ predicate: @escaping @Sendable (URLRequest) -> Bool) {
    self.init(.predicate(description, Predicate(predicate)), description: description)
  }

  /// What is wrong with the patterns in this matcher; empty when it is well formed.
  public var problems: [String] {
    var found: [String] = []
    func visit(_ node: Node) {
      switch node {
      case .invalid(let message): found.append(message)
      case .all(let nodes): nodes.forEach(visit)
      case .either(let a, let b):
        visit(a)
        visit(b)
      case .not(let inner): visit(inner)
      case .value(_, let pattern): found += pattern.problems
      default: break
      }
    }
    visit(node)
    return found
  }

  // MARK: - Factories

  /// Every request.
  public static var any: RequestMatcher { RequestMatcher(.any, description: "any request") }

  /// `GET` requests whose URL fits `pattern`.
  public static func get(_ pattern: String) -> RequestMatcher { method("GET", pattern) }
  /// `POST` requests whose URL fits `pattern`.
  public static func post(_ pattern: String) -> RequestMatcher { method("POST", pattern) }
  /// `PUT` requests whose URL fits `pattern`.
  public static func put(_ pattern: String) -> RequestMatcher { method("PUT", pattern) }
  /// `PATCH` requests whose URL fits `pattern`.
  public static func patch(_ pattern: String) -> RequestMatcher { method("PATCH", pattern) }
  /// `DELETE` requests whose URL fits `pattern`.
  public static func delete(_ pattern: String) -> RequestMatcher { method("DELETE", pattern) }
  /// `HEAD` requests whose URL fits `pattern`.
  public static func head(_ pattern: String) -> RequestMatcher { method("HEAD", pattern) }

  /// Requests with the HTTP method `method` (compared case-insensitively) whose URL fits
  /// `pattern`.
  public static func method(_ method: String, _ pattern: String) -> RequestMatcher {
    let name = method.uppercased()
    let url = url(pattern)
    return RequestMatcher(.all([.method(name), url.node]), description: "\(name) \(pattern)")
  }

  /// Requests of any method whose URL fits `pattern`.
  public static func url(_ pattern: String) -> RequestMatcher {
    do {
      return RequestMatcher(.pattern(try URLPattern(parsing: pattern)), description: pattern)
    } catch {
      return RequestMatcher(
        .invalid("The pattern \"\(pattern)\" is malformed: \(error.reason)."),
        description: pattern)
    }
  }

  /// Requests whose absolute URL string contains a match for the regular expression `pattern`.
  ///
  /// Anchor it (`^https://api\.example\.com/v[0-9]+/`) to match the whole URL.
  public static func regex(_ pattern: String) -> RequestMatcher {
    let description = "URL ~ /\(pattern)/"
    do {
      return RequestMatcher(
        .regex(pattern, try NSRegularExpression(pattern: pattern)), description: description)
    } catch {
      return RequestMatcher(
        .invalid(
          "The regular expression /\(pattern)/ does not compile (NSRegularExpression rejects it); "
            + "check its brackets, parentheses, quantifiers and escapes."),
        description: description)
    }
  }

  /// Requests whose query contains these items; a `nil` value accepts any value.
  public static func query(_ items: [String: String?]) -> RequestMatcher {
    let sorted = items.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    let text = sorted.map { item in item.value.map { "\(item.name)=\($0)" } ?? item.name }
    return RequestMatcher(.query(sorted), description: "query \(text.joined(separator: "&"))")
  }

  /// Requests with the header `name` (any case), and with exactly `value` if it is given.
  public static func header(_ name: String, _ value: String? = nil) -> RequestMatcher {
    RequestMatcher(.header(name, value), text: .header(name, value))
  }

  /// Requests whose body is exactly `data`.
  public static func body(_ data: Data) -> RequestMatcher {
    RequestMatcher(.body(data), description: "body \(BodyText(data))")
  }

  /// Requests whose body is JSON equal to `value` encoded with `JSONEncoder`, ignoring key order
  /// and white space.
  public static func jsonBody(_ value: some Encodable & Sendable) -> RequestMatcher {
    do {
      let json = try JSONValue(encoding: value)
      return RequestMatcher(.jsonBody(json), description: "JSON body \(json.shortDescription)")
    } catch {
      return RequestMatcher(
        .invalid("The value given to jsonBody(_:) cannot be encoded as JSON: \(sentence(error))"),
        description: "JSON body (unencodable \(type(of: value)))")
    }
  }

  /// Requests whose body is JSON equal to `object`, a `JSONSerialization` object (dictionaries,
  /// arrays, strings, numbers, `NSNull`), ignoring key order and white space.
  ///
  /// The untyped form of the `Encodable` ``jsonBody(_:)-107rh``, for bodies with no `Encodable` type
  /// at hand. A value of an `Encodable` type goes to that form; a dictionary literal that mixes
  /// value types comes here:
  ///
  /// ```swift
  /// mock.verify(.post("/todos").jsonBody(["title": "Buy milk", "done": false]))
  /// ```
  ///
  /// An object that JSON cannot represent makes a matcher that never matches and is reported
  /// where it is used.
  public static func jsonBody(_ object: Any) -> RequestMatcher {
    guard JSONSerialization.isValidJSONObject([object]),
      let data = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed]),
      let json = try? JSONValue(parsing: data)
    else {
      return RequestMatcher(
        .invalid(
          "The object given to jsonBody(_:) cannot be represented as JSON: "
            + "\(type(of: object)) \(String(describing: object).prefix(200))."),
        description: "JSON body (unrepresentable \(type(of: object)))")
    }
    return RequestMatcher(.jsonBody(json), description: "JSON body \(json.shortDescription)")
  }

  /// Requests whose body is JSON equal to the `JSONSerialization` object `object`: the old name
  /// of the untyped ``jsonBody(_:)-3nlta``.
  @available(*, deprecated, renamed: "jsonBody(_:)")
  public static func jsonObjectBody(_ object: Any) -> RequestMatcher { .jsonBody(object) }

  // MARK: - Refinements

  /// This matcher, and the query must contain these items (`nil`: any value).
  public func query(_ items: [String: String?]) -> RequestMatcher { self && .query(items) }

  /// This matcher, and the request must have header `name`, with `value` if it is given.
  public func header(_ name: String, _ value: String? = nil) -> RequestMatcher {
    self && .header(name, value)
  }

  /// This matcher, and the body must be exactly `data`.
  public func body(_ data: Data) -> RequestMatcher { self && .body(data) }

  /// This matcher, and the body must be JSON equal to `value`.
  public func jsonBody(_ value: some Encodable & Sendable) -> RequestMatcher {
    self && .jsonBody(value)
  }

  /// This matcher, and the body must be JSON equal to the `JSONSerialization` object `object`.
  public func jsonBody(_ object: Any) -> RequestMatcher { self && .jsonBody(object) }

  /// This matcher, and the body must be JSON equal to the `JSONSerialization` object `object`:
  /// the old name of the untyped ``jsonBody(_:)-7anq0``.
  @available(*, deprecated, renamed: "jsonBody(_:)")
  public func jsonObjectBody(_ object: Any) -> RequestMatcher { self && .jsonBody(object) }

  // MARK: - Combinators

  /// Requests that both matchers accept.
  public static func && (lhs: RequestMatcher, rhs: RequestMatcher) -> RequestMatcher {
    var nodes: [Node] = []
    for side in [lhs.node, rhs.node] {
      if case .all(let inner) = side { nodes += inner } else { nodes.append(side) }
    }
    return RequestMatcher(.all(nodes), text: lhs.text + " " + rhs.text)
  }

  /// Requests that either matcher accepts.
  public static func || (lhs: RequestMatcher, rhs: RequestMatcher) -> RequestMatcher {
    RequestMatcher(.either(lhs.node, rhs.node), text: "(" + lhs.text + " or " + rhs.text + ")")
  }

  /// Requests that the matcher rejects.
  public static prefix func ! (matcher: RequestMatcher) -> RequestMatcher {
    RequestMatcher(.not(matcher.node), text: "not (" + matcher.text + ")")
  }

  // MARK: - Matching

  /// Whether `request` matches.
  public func matches(_ request: URLRequest) -> Bool {
    evaluate(RequestFacts(request)).matched
  }

  /// The outcome of comparing one request with one matcher.
  struct Evaluation {
    /// What differed, each a short phrase such as `method: expected GET, got POST`.
    var mismatches: [String] = []
    /// Values of `{name}` parameters, when the pattern matched.
    var parameters: [String: String] = [:]
    /// How far the request is from matching; 0 when it matches.
    var distance: Double = 0

    /// Whether to collect `{name}` values: only a response built by a closure reads them.
    var capturesParameters = true
    /// How reports show header values; `nil`: ``ReportRedaction/default``.
    var redaction: ReportRedaction?

    var matched: Bool { mismatches.isEmpty }

    mutating func miss(_ text: String, weight: Double = 1) {
      mismatches.append(text)
      distance += weight
    }
  }

  /// Compares the request of `facts` with this matcher; what differed is phrased for a report
  /// that masks header values as `redaction` says (`nil`: as ``ReportRedaction/default`` does).
  func evaluate(
    _ facts: RequestFacts, capturingParameters: Bool = true, redaction: ReportRedaction? = nil
  ) -> Evaluation {
    var result = Evaluation()
    result.capturesParameters = capturingParameters
    result.redaction = redaction
    Self.evaluate(node, facts, into: &result)
    return result
  }

  private static func evaluate(_ node: Node, _ facts: RequestFacts, into result: inout Evaluation) {
    switch node {
    case .any:
      return
    case .method(let method):
      if facts.method != method { result.miss("method: expected \(method), got \(facts.method)") }
    case .pattern(let pattern):
      PatternComparison.compare(pattern, facts, into: &result)
    case .exactURL(let exact):
      exact.compare(facts, into: &result)
    case .regex(let source, let regex):
      let text = facts.url?.absoluteString ?? ""
      if !MatchBudget.search(regex, in: text, source: source) {
        result.miss("URL: \(text) does not match /\(source)/", weight: 2)
      }
    case .predicate(let description, let predicate):
      if !predicate.test(facts.request) { result.miss("\(description): not satisfied") }
    case .query(let items):
      PatternComparison.compareQuery(items, facts, into: &result)
    case .header(let name, let value):
      switch (facts.header(name), value) {
      case (nil, _): result.miss("header \(name): missing")
      case (let actual?, let expected?) where actual != expected:
        if (result.redaction ?? .default).masks(name) {
          result.miss(
            "header \(name): differs (expected \(expected.count) characters, got "
              + "\(actual.count); values masked)")
        } else {
          result.miss("header \(name): expected \"\(expected)\", got \"\(actual)\"")
        }
      default: break
      }
    case .body(let expected):
      let actual = facts.request.httpBody ?? Data()
      if actual != expected {
        result.miss("body: expected \(BodyText(expected)), got \(BodyText(actual))")
      }
    case .jsonBody(let expected):
      guard let parsed = facts.jsonBody, let data = facts.request.httpBody else {
        result.miss("body: expected JSON \(expected.shortDescription), got no body")
        return
      }
      guard case .success(let actual) = parsed else {
        result.miss(
          "body: expected JSON \(expected.shortDescription), got a body that is not JSON: "
            + "\(BodyText(data))")
        return
      }
      if let difference = expected.firstDifference(from: actual) {
        if difference.path == "$" {
          result.miss("body: expected JSON \(difference.expected), got \(difference.actual)")
        } else {
          result.miss(
            "body \(difference.path): expected \(difference.expected), got \(difference.actual)")
        }
      }
    case .all(let nodes):
      for inner in nodes { evaluate(inner, facts, into: &result) }
    case .either(let a, let b):
      if let problem = RequestMatcher(node, description: "").problems.first {
        // A malformed side leaves the whole matcher malformed: it never matches.
        result.miss(problem, weight: 100)
        return
      }
      var left = Evaluation(
        capturesParameters: result.capturesParameters, redaction: result.redaction)
      evaluate(a, facts, into: &left)
      if left.matched {
        result.parameters.merge(left.parameters) { $1 }
        return
      }
      var right = Evaluation(
        capturesParameters: result.capturesParameters, redaction: result.redaction)
      evaluate(b, facts, into: &right)
      let best = right.matched || right.distance < left.distance ? right : left
      result.parameters.merge(best.parameters) { $1 }
      for mismatch in best.mismatches { result.miss(mismatch, weight: 0) }
      result.distance += best.distance
    case .not(let inner):
      if let problem = RequestMatcher(inner, description: "").problems.first {
        // Not "not malformed": a malformed matcher never matches, negated or not.
        result.miss(problem, weight: 100)
        return
      }
      var innerResult = Evaluation(capturesParameters: false, redaction: result.redaction)
      evaluate(inner, facts, into: &innerResult)
      if innerResult.matched {
        result.miss(
          "matched what it should not: "
            + Self.describe(inner, redacting: result.redaction ?? .default))
      }
    case .invalid(let message):
      result.miss(message, weight: 100)
    case .condition(let condition):
      condition.compare(facts, into: &result)
    case .value(let target, let pattern):
      target.compare(pattern, facts, into: &result)
    }
  }

  /// `node` in words, with header values masked as `redaction` says.
  static func describe(_ node: Node, redacting redaction: ReportRedaction = .default) -> String {
    text(of: node).rendered(redaction)
  }

  /// `node` in words, its header values maskable.
  static func text(of node: Node) -> ReportText {
    switch node {
    case .any: return ReportText("any request")
    case .method(let method): return ReportText(method)
    case .pattern(let pattern): return ReportText(pattern.source)
    case .exactURL(let exact): return ReportText(exact.url.absoluteString)
    case .regex(let source, _): return ReportText("/\(source)/")
    case .predicate(let description, _): return ReportText(description)
    case .query(let items):
      return ReportText(
        "query " + items.map { "\($0.name)=\($0.value ?? "*")" }.joined(separator: "&"))
    case .header(let name, let value): return .header(name, value)
    case .body(let data): return ReportText("body \(BodyText(data))")
    case .jsonBody(let json): return ReportText("JSON body \(json)")
    case .all(let nodes):
      return nodes.dropFirst().reduce(nodes.first.map(text(of:)) ?? ReportText("")) {
        $0 + " " + text(of: $1)
      }
    case .either(let a, let b): return "(" + text(of: a) + " or " + text(of: b) + ")"
    case .not(let inner): return "not (" + text(of: inner) + ")"
    case .invalid(let message): return ReportText(message)
    case .condition(let condition): return ReportText(condition.description)
    case .value(let target, let pattern): return target.text(pattern)
    }
  }

  /// Whether evaluating this matcher runs a closure from the test (then routing must not hold
  /// its lock while it evaluates).
  var callsUserCode: Bool {
    func visit(_ node: Node) -> Bool {
      switch node {
      case .predicate: return true
      case .all(let nodes): return nodes.contains(where: visit)
      case .either(let a, let b): return visit(a) || visit(b)
      case .not(let inner): return visit(inner)
      default: return false
      }
    }
    return visit(node)
  }

  /// Whether evaluating this matcher may take long on some request: a regular expression, a
  /// JSONPath, JSON to parse. Routing then evaluates it outside its lock, under the request's
  /// ``MatchBudget``, so that one slow pattern holds up its own request only.
  var mayRunLong: Bool {
    func visit(_ node: Node) -> Bool {
      switch node {
      case .regex, .jsonBody: return true
      case .value(_, let pattern): return pattern.mayRunLong
      case .condition(let condition): return condition.mayRunLong
      case .all(let nodes): return nodes.contains(where: visit)
      case .either(let a, let b): return visit(a) || visit(b)
      case .not(let inner): return visit(inner)
      default: return false
      }
    }
    return visit(node)
  }

  /// The method and path pattern every matching request must have, for the router's index.
  var indexKey: (method: String?, pattern: URLPattern)? {
    switch node {
    case .pattern(let pattern): return (nil, pattern)
    case .all(let nodes):
      var method: String?
      var pattern: URLPattern?
      for inner in nodes {
        switch inner {
        case .method(let name):
          if method != nil && method != name { return nil }
          method = name
        case .pattern(let found):
          if pattern != nil { return nil }
          pattern = found
        default: continue
        }
      }
      return pattern.map { (method, $0) }
    default: return nil
    }
  }
}

extension RequestMatcher {
  /// How far `request` is from matching, in `0..<1` (0: it matches; the weight `w` of what
  /// differed as `w / (w + 1)`, as the mock's near misses are), with what differed on one line:
  /// the admin API's `POST /__admin/near-misses/request-pattern` ranks the journal with it.
  package func nearMissDistance(to request: URLRequest) -> (distance: Double, report: String) {
    let evaluation = evaluate(RequestFacts(request), capturingParameters: false)
    let weight = max(0, evaluation.distance)
    return (weight / (weight + 1), evaluation.mismatches.joined(separator: "; "))
  }
}
