import Foundation

/// A JSONPath expression, the subset that WireMock's `matchesJsonPath` is used with: `$`, dotted
/// and bracketed members (`$.a.b`, `$['a']`), array indexes (`[0]`, `[-1]`, `[0,2]`, `[1:3]`),
/// wildcards (`.*`, `[*]`), recursive descent (`..name`) and filters
/// (`[?(@.price < 10 && @.sku == 'A1')]`, `[?(@.tag)]`, `=~ /regex/`).
///
/// Parsing throws a ``JSONPath/SyntaxError`` that says where the expression is wrong;
/// evaluating never fails and never traps, whatever the document: a path that leads nowhere
/// selects nothing.
struct JSONPath: Sendable, Equatable, CustomStringConvertible {
  /// The expression as written.
  let source: String
  fileprivate let steps: [Step]

  /// Why an expression is not a JSONPath this package evaluates.
  struct SyntaxError: Error, Equatable {
    let reason: String
  }

  fileprivate indirect enum Step: Sendable, Equatable {
    case member(String)
    case members([String])
    case index([Int])
    case slice(start: Int?, end: Int?)
    case wildcard
    /// `..`: this value and every value under it, then the next step.
    case descendants
    case filter(Filter)
  }

  fileprivate indirect enum Filter: Sendable, Equatable {
    case exists(Operand)
    case compare(Operand, Comparison, Operand)
    case matches(Operand, String, RegexBox)
    case and(Filter, Filter)
    case or(Filter, Filter)
    case not(Filter)
  }

  fileprivate enum Comparison: String, Sendable, Equatable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
  }

  fileprivate enum Operand: Sendable, Equatable {
    /// `@` followed by steps, relative to the item being filtered; `$` for the root.
    case path(relative: Bool, [Step])
    case literal(JSONValue)
  }

  /// A compiled regular expression, compared by its source.
  fileprivate struct RegexBox: Sendable, Equatable {
    let source: String
    let regex: NSRegularExpression

    static func == (lhs: RegexBox, rhs: RegexBox) -> Bool { lhs.source == rhs.source }
  }

  /// The longest expression read, and the deepest nesting of filters: past these an
  /// expression is refused rather than risk the stack.
  static let maximumLength = 4_096
  static let maximumNesting = 16

  /// Parses `source`.
  init(parsing source: String) throws(SyntaxError) {
    guard source.utf8.count <= Self.maximumLength else {
      throw SyntaxError(reason: "longer than \(Self.maximumLength) bytes")
    }
    var parser = Parser(Array(source.unicodeScalars))
    self.source = source
    self.steps = try parser.root()
  }

  var description: String { source }

  /// Whether the path names one place (no wildcard, filter, slice, list or `..`): then its
  /// result is that value, not a list.
  var isDefinite: Bool {
    steps.allSatisfy {
      if case .member = $0 { return true }
      if case .index(let list) = $0 { return list.count == 1 }
      return false
    }
  }

  /// A step of a definite path: a member, or one index.
  enum DefiniteStep: Sendable, Equatable {
    case member(String)
    case index(Int)
  }

  /// The steps of a definite path (see ``isDefinite``), or `nil` when it is not one.
  var definiteSteps: [DefiniteStep]? {
    var result: [DefiniteStep] = []
    for step in steps {
      switch step {
      case .member(let name): result.append(.member(name))
      case .index(let list) where list.count == 1: result.append(.index(list[0]))
      default: return nil
      }
    }
    return result
  }

  /// The value a definite path (see ``isDefinite``) names in the parsed `node`, as
  /// ``select(in:)`` finds it in the document `node` reads as (the last of a repeated key
  /// counts), or `nil` when it names nothing; without making that document. `nil` too when the
  /// path is not definite.
  func selectDefinite(in node: JSONNode) -> JSONNode? {
    var current = node
    for step in steps {
      switch (step, current) {
      case (.member(let name), .object(let members)):
        guard let found = members.last(where: { $0.key == name }) else { return nil }
        current = found.value
      case (.index(let indexes), .array(let items)) where indexes.count == 1:
        let resolved = indexes[0] < 0 ? items.count + indexes[0] : indexes[0]
        guard resolved >= 0 && resolved < items.count else { return nil }
        current = items[resolved]
      default:
        return nil
      }
    }
    return current
  }

  /// The values the path selects in `document`, in document order.
  ///
  /// The evaluation is bounded: under the request's ``MatchBudget`` (or, outside routing, the
  /// default ``MatchLimits``), a step that would hold more than `maxJSONPathValues` values, or
  /// an evaluation still running at the budget's deadline, stops, records the overrun naming
  /// this path, and selects nothing.
  func select(in document: JSONValue) -> [JSONValue] {
    let budget = MatchBudget.current ?? MatchBudget(MatchLimits(maxDuration: .seconds(1 << 40)))
    let walk = Walk(root: document, budget: budget, source: source)
    guard !budget.isSpent else { return [] }
    let selected = Self.apply(steps[...], to: [document], walk: walk)
    return budget.isSpent ? [] : selected
  }

  /// What every step of one evaluation shares: the document's root, and the budget it spends.
  private struct Walk {
    let root: JSONValue
    let budget: MatchBudget
    let source: String

    /// Whether the evaluation must stop: `count` values are more than the budget allows, or
    /// its time is up. Records the overrun the first time.
    func mustStop(holding count: Int) -> Bool {
      if budget.isSpent { return true }
      let cap = budget.limits.maxJSONPathValues
      if count > cap {
        budget.overran(
          "JSONPath \(source)",
          "selected more than \(cap) values (the most one evaluation may select)")
        return true
      }
      if budget.isPastDeadline {
        budget.overran(
          "JSONPath \(source)",
          "was still running after \(budget.durationText) of real time")
        return true
      }
      return false
    }
  }

  private static func apply(_ steps: ArraySlice<Step>, to values: [JSONValue], walk: Walk)
    -> [JSONValue]
  {
    var current = values
    var rest = steps
    while let step = rest.first {
      rest = rest.dropFirst()
      var next: [JSONValue] = []
      for value in current {
        switch step {
        case .descendants:
          guard collectDescendants(of: value, into: &next, walk: walk) else { return [] }
        default:
          apply(step, to: value, walk: walk, into: &next)
        }
        if walk.mustStop(holding: next.count) { return [] }
      }
      current = next
      if current.isEmpty { break }
    }
    return current
  }

  /// Adds `value` and every value under it to `result`; returns `false` when the walk must
  /// stop.
  private static func collectDescendants(
    of value: JSONValue, into result: inout [JSONValue], walk: Walk
  ) -> Bool {
    // Iterative, so that a deep document cannot exhaust the stack.
    var stack = [value]
    while let top = stack.popLast() {
      if result.count & 1023 == 1023, walk.mustStop(holding: result.count + stack.count) {
        return false
      }
      result.append(top)
      switch top {
      case .array(let items): stack.append(contentsOf: items.reversed())
      case .object(let members):
        stack.append(contentsOf: members.keys.sorted().reversed().compactMap { members[$0] })
      default: break
      }
    }
    return true
  }

  private static func apply(
    _ step: Step, to value: JSONValue, walk: Walk, into result: inout [JSONValue]
  ) {
    switch step {
    case .member(let name):
      if case .object(let members) = value, let found = members[name] { result.append(found) }
    case .members(let names):
      if case .object(let members) = value {
        for name in names { if let found = members[name] { result.append(found) } }
      }
    case .index(let indexes):
      guard case .array(let items) = value else { return }
      for index in indexes {
        let resolved = index < 0 ? items.count + index : index
        if resolved >= 0 && resolved < items.count { result.append(items[resolved]) }
      }
    case .slice(let start, let end):
      guard case .array(let items) = value else { return }
      let count = items.count
      func clamp(_ bound: Int?, _ otherwise: Int) -> Int {
        guard let bound else { return otherwise }
        return Swift.max(0, Swift.min(count, bound < 0 ? count + bound : bound))
      }
      let lower = clamp(start, 0)
      let upper = clamp(end, count)
      if lower < upper { result.append(contentsOf: items[lower..<upper]) }
    case .wildcard:
      switch value {
      case .array(let items): result.append(contentsOf: items)
      case .object(let members):
        result.append(contentsOf: members.keys.sorted().compactMap { members[$0] })
      default: break
      }
    case .descendants:
      _ = collectDescendants(of: value, into: &result, walk: walk)
    case .filter(let filter):
      switch value {
      case .array(let items):
        for item in items where holds(filter, for: item, walk: walk) { result.append(item) }
      case .object:
        // Jayway (WireMock's JSONPath) tests an object itself, not its members:
        // `$[?(@.name=='A')]` holds for {"name":"A"} and not for {"x":{"name":"A"}}.
        if holds(filter, for: value, walk: walk) { result.append(value) }
      default: break
      }
    }
  }

  private static func holds(_ filter: Filter, for item: JSONValue, walk: Walk) -> Bool {
    switch filter {
    case .exists(let operand):
      return !values(of: operand, item: item, walk: walk).isEmpty
    case .compare(let left, let comparison, let right):
      let lhs = values(of: left, item: item, walk: walk)
      let rhs = values(of: right, item: item, walk: walk)
      guard lhs.count == 1, rhs.count == 1 else {
        return comparison == .notEqual && lhs.count != rhs.count
      }
      return compare(lhs[0], comparison, rhs[0])
    case .matches(let operand, _, let box):
      guard case .string(let text)? = values(of: operand, item: item, walk: walk).first else {
        return false
      }
      return MatchBudget.search(box.regex, in: text, source: box.source)
    case .and(let a, let b):
      return holds(a, for: item, walk: walk) && holds(b, for: item, walk: walk)
    case .or(let a, let b):
      return holds(a, for: item, walk: walk) || holds(b, for: item, walk: walk)
    case .not(let inner): return !holds(inner, for: item, walk: walk)
    }
  }

  private static func values(of operand: Operand, item: JSONValue, walk: Walk) -> [JSONValue] {
    switch operand {
    case .literal(let value): return [value]
    case .path(let relative, let steps):
      return apply(steps[...], to: [relative ? item : walk.root], walk: walk)
    }
  }

  private static func compare(_ a: JSONValue, _ comparison: Comparison, _ b: JSONValue) -> Bool {
    switch comparison {
    case .equal: return a == b
    case .notEqual: return a != b
    default: break
    }
    let order: Int?
    switch (number(a), number(b), a, b) {
    case (let x?, let y?, _, _): order = x < y ? -1 : (x > y ? 1 : 0)
    case (_, _, .string(let x), .string(let y)): order = x < y ? -1 : (x > y ? 1 : 0)
    default: order = nil
    }
    guard let order else { return false }
    switch comparison {
    case .less: return order < 0
    case .lessOrEqual: return order <= 0
    case .greater: return order > 0
    case .greaterOrEqual: return order >= 0
    case .equal, .notEqual: return false
    }
  }

  private static func number(_ value: JSONValue) -> Double? {
    switch value {
    case .integer(let number): return Double(number)
    case .double(let number): return number
    default: return nil
    }
  }

  // MARK: - Parsing

  private struct Parser {
    let text: [Unicode.Scalar]
    var offset = 0
    var nesting = 0

    init(_ text: [Unicode.Scalar]) {
      self.text = text
    }

    var peek: Unicode.Scalar? { offset < text.count ? text[offset] : nil }

    func fail(_ reason: String) -> SyntaxError {
      SyntaxError(reason: "\(reason) at character \(offset + 1)")
    }

    mutating func skipSpace() {
      while let scalar = peek, scalar == " " || scalar == "\t" { offset += 1 }
    }

    mutating func eat(_ scalar: Unicode.Scalar) -> Bool {
      guard peek == scalar else { return false }
      offset += 1
      return true
    }

    mutating func eat(_ word: String) -> Bool {
      let scalars = Array(word.unicodeScalars)
      guard offset + scalars.count <= text.count,
        Array(text[offset..<offset + scalars.count]) == scalars
      else { return false }
      offset += scalars.count
      return true
    }

    mutating func root() throws(SyntaxError) -> [Step] {
      skipSpace()
      guard eat("$") else { throw fail("expected the expression to start with $") }
      let steps = try self.steps()
      skipSpace()
      guard peek == nil else { throw fail("unexpected \"\(peek.map(String.init) ?? "")\"") }
      return steps
    }

    /// Steps until something that is not a step (the end, an operator, a parenthesis).
    mutating func steps() throws(SyntaxError) -> [Step] {
      var steps: [Step] = []
      while true {
        if eat("..") {
          steps.append(.descendants)
          if peek == "[" { continue }
          if eat("*") {
            steps.append(.wildcard)
            continue
          }
          steps.append(.member(try name()))
        } else if eat(".") {
          // `$.[...]`, as Jayway reads it: the bracket applies to what the dot follows.
          if peek == "[" { continue }
          if eat("*") {
            steps.append(.wildcard)
          } else {
            let member = try name()
            // `.length()` and other functions are not part of the subset.
            if peek == "(" { throw fail("functions such as \(member)() are not supported") }
            steps.append(.member(member))
          }
        } else if peek == "[" {
          offset += 1
          steps.append(try bracket())
        } else {
          return steps
        }
      }
    }

    mutating func name() throws(SyntaxError) -> String {
      var scalars = String.UnicodeScalarView()
      while let scalar = peek,
        !(".[]()=!<>&|, \t'\"~" as String).unicodeScalars.contains(scalar)
      {
        scalars.append(scalar)
        offset += 1
      }
      guard !scalars.isEmpty else { throw fail("expected a member name") }
      return String(scalars)
    }

    mutating func bracket() throws(SyntaxError) -> Step {
      skipSpace()
      let step: Step
      if eat("*") {
        step = .wildcard
      } else if eat("?") {
        skipSpace()
        guard eat("(") else { throw fail("expected ( after ?") }
        nesting += 1
        guard nesting <= JSONPath.maximumNesting else { throw fail("filters nested too deeply") }
        let filter = try orFilter()
        nesting -= 1
        skipSpace()
        guard eat(")") else { throw fail("expected ) to close the filter") }
        step = .filter(filter)
      } else if peek == "'" || peek == "\"" {
        var names = [try quoted()]
        skipSpace()
        while eat(",") {
          skipSpace()
          names.append(try quoted())
          skipSpace()
        }
        step = names.count == 1 ? .member(names[0]) : .members(names)
      } else {
        let first = try optionalInteger()
        skipSpace()
        if eat(":") {
          skipSpace()
          let end = try optionalInteger()
          step = .slice(start: first, end: end)
        } else {
          guard let first else { throw fail("expected an index, a name, * or a filter") }
          var indexes = [first]
          while eat(",") {
            skipSpace()
            guard let next = try optionalInteger() else { throw fail("expected an index") }
            indexes.append(next)
            skipSpace()
          }
          step = .index(indexes)
        }
      }
      skipSpace()
      guard eat("]") else { throw fail("expected ]") }
      return step
    }

    mutating func optionalInteger() throws(SyntaxError) -> Int? {
      var digits = ""
      if eat("-") { digits = "-" }
      while let scalar = peek, ("0"..."9").contains(scalar) {
        digits.unicodeScalars.append(scalar)
        offset += 1
      }
      if digits.isEmpty { return nil }
      guard let value = Int(digits), value > -(1 << 31), value < 1 << 31 else {
        throw fail("expected an index, got \(digits)")
      }
      return value
    }

    mutating func quoted() throws(SyntaxError) -> String {
      guard let quote = peek, quote == "'" || quote == "\"" else { throw fail("expected a quote") }
      offset += 1
      var scalars = String.UnicodeScalarView()
      while let scalar = peek {
        offset += 1
        if scalar == quote { return String(scalars) }
        if scalar == "\\", let escaped = peek {
          offset += 1
          scalars.append(escaped)
        } else {
          scalars.append(scalar)
        }
      }
      throw fail("unterminated string")
    }

    mutating func orFilter() throws(SyntaxError) -> Filter {
      var filter = try andFilter()
      skipSpace()
      while eat("||") {
        filter = .or(filter, try andFilter())
        skipSpace()
      }
      return filter
    }

    mutating func andFilter() throws(SyntaxError) -> Filter {
      var filter = try unaryFilter()
      skipSpace()
      while eat("&&") {
        filter = .and(filter, try unaryFilter())
        skipSpace()
      }
      return filter
    }

    mutating func unaryFilter() throws(SyntaxError) -> Filter {
      skipSpace()
      if eat("!") {
        if peek == "=" { throw fail("unexpected !=") }
        nesting += 1
        guard nesting <= JSONPath.maximumNesting else { throw fail("filters nested too deeply") }
        let inner = try unaryFilter()
        nesting -= 1
        return .not(inner)
      }
      if eat("(") {
        nesting += 1
        guard nesting <= JSONPath.maximumNesting else { throw fail("filters nested too deeply") }
        let inner = try orFilter()
        nesting -= 1
        skipSpace()
        guard eat(")") else { throw fail("expected )") }
        return inner
      }
      let left = try operand()
      skipSpace()
      if eat("=~") {
        skipSpace()
        guard eat("/") else { throw fail("expected /regex/ after =~") }
        var source = ""
        while let scalar = peek, scalar != "/" {
          offset += 1
          if scalar == "\\", let next = peek, next == "/" {
            offset += 1
            source += "/"
          } else {
            source.unicodeScalars.append(scalar)
          }
        }
        guard eat("/") else { throw fail("unterminated /regex/") }
        var options: NSRegularExpression.Options = []
        if eat("i") { options.insert(.caseInsensitive) }
        guard
          let regex = try? NSRegularExpression(pattern: "^(?:" + source + ")$", options: options)
        else { throw fail("the regular expression /\(source)/ does not compile") }
        return .matches(left, source, RegexBox(source: source, regex: regex))
      }
      for comparison in [
        Comparison.equal, .notEqual, .lessOrEqual, .greaterOrEqual, .less, .greater,
      ] where eat(comparison.rawValue) {
        skipSpace()
        return .compare(left, comparison, try operand())
      }
      guard case .path = left else { throw fail("expected a comparison after a value") }
      return .exists(left)
    }

    mutating func operand() throws(SyntaxError) -> Operand {
      skipSpace()
      if eat("@") { return .path(relative: true, try steps()) }
      if eat("$") { return .path(relative: false, try steps()) }
      if peek == "'" || peek == "\"" { return .literal(.string(try quoted())) }
      if eat("true") { return .literal(.bool(true)) }
      if eat("false") { return .literal(.bool(false)) }
      if eat("null") { return .literal(.null) }
      var literal = ""
      while let scalar = peek,
        ("0"..."9").contains(scalar) || "-+.eE".unicodeScalars.contains(scalar)
      {
        literal.unicodeScalars.append(scalar)
        offset += 1
      }
      if let integer = Int64(literal) { return .literal(.integer(integer)) }
      if let number = Double(literal), number.isFinite { return .literal(.double(number)) }
      throw fail("expected @, a string, a number, true, false or null")
    }
  }
}
