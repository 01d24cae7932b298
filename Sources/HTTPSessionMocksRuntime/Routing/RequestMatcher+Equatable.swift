import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Matchers compare by structure: two matchers are equal when they test the same things the
/// same way, whatever their descriptions say.
///
/// `.get("/a") && .header("X")` equals the same expression built again, and
/// `(.get("/a") && .header("X")) && .query(["q": nil])` equals
/// `.get("/a") && (.header("X") && .query(["q": nil]))` (an `&&` of `&&`s is one list of
/// conditions). Patterns and regular expressions compare by their source text, JSON bodies as
/// JSON values. A matcher made with ``RequestMatcher/init(_:_:)`` holds a closure, which cannot
/// be compared: it equals only itself and its copies, never a matcher made separately, even
/// from the same closure.
extension RequestMatcher: Equatable {
  /// Whether the two matchers test the same things the same way.
  public static func == (lhs: RequestMatcher, rhs: RequestMatcher) -> Bool {
    Node.same(lhs.node.normalized, rhs.node.normalized)
  }
}

extension RequestMatcher.Node {
  /// The node with nested `.all`s flattened and one-element `.all`s unwrapped, so that equal
  /// conditions compare equal however they were grouped.
  var normalized: RequestMatcher.Node {
    switch self {
    case .all(let nodes):
      var flat: [RequestMatcher.Node] = []
      for node in nodes {
        let inner = node.normalized
        if case .all(let more) = inner { flat += more } else { flat.append(inner) }
      }
      return flat.count == 1 ? flat[0] : .all(flat)
    case .either(let a, let b): return .either(a.normalized, b.normalized)
    case .not(let inner): return .not(inner.normalized)
    default: return self
    }
  }

  /// Structural equality of normalized nodes.
  static func same(_ lhs: RequestMatcher.Node, _ rhs: RequestMatcher.Node) -> Bool {
    switch (lhs, rhs) {
    case (.any, .any): return true
    case (.method(let a), .method(let b)): return a == b
    case (.pattern(let a), .pattern(let b)): return a.source == b.source
    case (.exactURL(let a), .exactURL(let b)): return a.url.absoluteString == b.url.absoluteString
    case (.regex(let a, _), .regex(let b, _)): return a == b
    case (.predicate(_, let a), .predicate(_, let b)): return a === b
    case (.query(let a), .query(let b)):
      return a.count == b.count
        && zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    case (.header(let a, let x), .header(let b, let y)):
      return a.caseInsensitiveCompare(b) == .orderedSame && x == y
    case (.body(let a), .body(let b)): return a == b
    case (.jsonBody(let a), .jsonBody(let b)): return a == b
    case (.all(let a), .all(let b)): return a.count == b.count && zip(a, b).allSatisfy(same)
    case (.either(let a, let x), .either(let b, let y)): return same(a, b) && same(x, y)
    case (.not(let a), .not(let b)): return same(a, b)
    case (.invalid(let a), .invalid(let b)): return a == b
    case (.condition(let a), .condition(let b)): return a.isEqual(to: b)
    case (.value(let a, let x), .value(let b, let y)): return a == b && x == y
    default: return false
    }
  }
}
