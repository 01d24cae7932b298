/// A trie of path patterns, so that routing looks at the stubs whose path can fit the request
/// instead of scanning all of them.
///
/// Nodes live in one array and refer to each other by index, so that inserting and searching
/// are loops, not recursion: a 10,000-segment path costs no stack.
struct PathIndex: Sendable {
  private struct Node: Sendable {
    var literals: [String: Int] = [:]
    var parameters: [(prefix: String, suffix: String, child: Int)] = []
    var ids: [Int] = []
  }

  private var nodes = [Node()]

  mutating func insert(_ segments: [URLPattern.Segment], id: Int) {
    var current = 0
    for segment in segments {
      switch segment {
      case .literal(let text):
        if let next = nodes[current].literals[text] {
          current = next
        } else {
          nodes.append(Node())
          nodes[current].literals[text] = nodes.count - 1
          current = nodes.count - 1
        }
      case .parameter(_, let prefix, let suffix):
        if let existing = nodes[current].parameters.first(where: {
          $0.prefix == prefix && $0.suffix == suffix
        }) {
          current = existing.child
        } else {
          nodes.append(Node())
          nodes[current].parameters.append((prefix, suffix, nodes.count - 1))
          current = nodes.count - 1
        }
      }
    }
    nodes[current].ids.append(id)
  }

  /// Removes `id` from the node that `segments` lead to (nodes stay; they are few and cheap).
  mutating func remove(_ segments: [URLPattern.Segment], id: Int) {
    var current = 0
    for segment in segments {
      switch segment {
      case .literal(let text):
        guard let next = nodes[current].literals[text] else { return }
        current = next
      case .parameter(_, let prefix, let suffix):
        guard
          let next = nodes[current].parameters.first(where: {
            $0.prefix == prefix && $0.suffix == suffix
          })?.child
        else { return }
        current = next
      }
    }
    nodes[current].ids.removeAll { $0 == id }
  }

  /// The ids of every pattern whose segments fit `segments`.
  func candidates(for segments: [String]) -> [Int] {
    // Most tables hold literal paths: follow them without a search stack while no node on the
    // way has a parameter child.
    var current = 0
    var depth = 0
    while depth < segments.count, nodes[current].parameters.isEmpty {
      guard let next = nodes[current].literals[segments[depth]] else { return [] }
      current = next
      depth += 1
    }
    if depth == segments.count { return nodes[current].ids }
    var found: [Int] = []
    var stack: [(node: Int, depth: Int)] = [(current, depth)]
    while let (index, depth) = stack.popLast() {
      if depth == segments.count {
        found += nodes[index].ids
        continue
      }
      let segment = segments[depth]
      if let next = nodes[index].literals[segment] { stack.append((next, depth + 1)) }
      for parameter in nodes[index].parameters
      where PatternComparison.capture(segment, prefix: parameter.prefix, suffix: parameter.suffix)
        != nil
      {
        stack.append((parameter.child, depth + 1))
      }
    }
    return found
  }
}
