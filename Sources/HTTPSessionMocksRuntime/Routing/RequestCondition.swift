/// A rule that a file format brings and the router evaluates, describes and compares without
/// knowing the format: a `RequestMatcher` holds one in its `.condition` node.
///
/// MockingBird's matching rules (`Bundles/MockingBirdFormat.swift`) are one: an exact method,
/// `://host[:port]/path` under any scheme, its one-way query rule. A format whose rules code can
/// say too gets `RequestMatcher` factories instead; a condition is for the rules that exist only
/// in a file. A condition runs no user code, so the router may evaluate it under its lock,
/// unless it says it ``mayRunLong``.
protocol RequestCondition: Sendable, CustomStringConvertible {
  /// Adds to `result` what about the request of `facts` breaks the rule, each a short phrase
  /// for near-miss reports (`method: expected GET (exactly), got get`), weighted by how far
  /// off it is.
  func compare(_ facts: RequestFacts, into result: inout RequestMatcher.Evaluation)

  /// Whether `other` is the same rule, for `RequestMatcher`'s structural `==`.
  func isEqual(to other: any RequestCondition) -> Bool

  /// The decoded path every request the rule accepts has, when the rule requires one exact
  /// path, for the router's exact-path index; `nil` (the default) when it does not, and the
  /// stub is tried for every request.
  var indexPath: String? { get }

  /// Whether evaluating the rule may take long (a regular expression): the router then
  /// evaluates it outside its lock, under the request's match budget.
  var mayRunLong: Bool { get }
}

extension RequestCondition {
  var indexPath: String? { nil }
  var mayRunLong: Bool { false }
}

extension RequestCondition where Self: Equatable {
  func isEqual(to other: any RequestCondition) -> Bool {
    (other as? Self) == self
  }
}
