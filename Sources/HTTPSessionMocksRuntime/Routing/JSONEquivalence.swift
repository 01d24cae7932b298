import Foundation

/// WireMock's `equalToJson`: two JSON documents compared as values (`1` equals `1.0`, key
/// order and white space do not count), with its two options and json-unit's placeholders in
/// the expected document, as WireMock 2.35 reads them:
///
/// - `ignoreArrayOrder`: an array matches another holding the same items in any order;
/// - `ignoreExtraElements`: the actual document may have members the expected one lacks, and
///   arrays may have items beyond the expected ones (after them, or anywhere when the order is
///   ignored too);
/// - `"${json-unit.ignore}"` matches any value (the member must be there),
///   `"${json-unit.any-string}"`, `"${json-unit.any-number}"` and `"${json-unit.any-boolean}"`
///   a value of that type, and `"${json-unit.regex}PATTERN"` a string that PATTERN matches
///   whole.
struct JSONEquivalence: Sendable, Equatable {
  var ignoresArrayOrder = false
  var ignoresExtraElements = false

  /// A difference: where, and the two values there.
  struct Difference {
    let path: String
    let expected: String
    let actual: String
  }

  /// The first place where `actual` differs from `expected`, or `nil` when they match.
  func difference(expected: JSONValue, actual: JSONValue, at path: String = "$") -> Difference? {
    if case .string(let text) = expected, let placeholder = Self.placeholder(text) {
      return placeholder(actual)
        ? nil : Difference(path: path, expected: text, actual: actual.shortDescription)
    }
    switch (expected, actual) {
    case (.object(let want), .object(let got)):
      for key in want.keys.sorted() {
        guard let value = got[key] else {
          return Difference(
            path: path + Self.member(key), expected: want[key]?.shortDescription ?? "",
            actual: "nothing (missing)")
        }
        if let found = difference(
          expected: want[key] ?? .null, actual: value, at: path + Self.member(key))
        {
          return found
        }
      }
      if !ignoresExtraElements, let extra = got.keys.sorted().first(where: { want[$0] == nil }) {
        return Difference(
          path: path + Self.member(extra), expected: "nothing",
          actual: "\(got[extra]?.shortDescription ?? "") (extra)")
      }
      return nil
    case (.array(let want), .array(let got)):
      if want.count > got.count || (!ignoresExtraElements && want.count != got.count) {
        return Difference(
          path: path + ".count", expected: String(want.count), actual: String(got.count))
      }
      if ignoresArrayOrder {
        var unused = Array(got.indices)
        for (index, item) in want.enumerated() {
          guard
            let match = unused.firstIndex(where: {
              difference(expected: item, actual: got[$0]) == nil
            })
          else {
            return Difference(
              path: "\(path)[\(index)]", expected: item.shortDescription,
              actual: "no item of the array that matches (in any order)")
          }
          unused.remove(at: match)
        }
        return nil
      }
      if ignoresExtraElements {
        // The expected items in order, with extra items anywhere between them.
        var position = 0
        for (index, item) in want.enumerated() {
          while position < got.count, difference(expected: item, actual: got[position]) != nil {
            position += 1
          }
          guard position < got.count else {
            return Difference(
              path: "\(path)[\(index)]", expected: item.shortDescription,
              actual: "no such item in order")
          }
          position += 1
        }
        return nil
      }
      for (index, (item, other)) in zip(want, got).enumerated() {
        if let found = difference(expected: item, actual: other, at: "\(path)[\(index)]") {
          return found
        }
      }
      return nil
    default:
      return expected == actual
        ? nil
        : Difference(
          path: path, expected: expected.shortDescription, actual: actual.shortDescription)
    }
  }

  /// The test a json-unit placeholder stands for, or `nil` when `text` is not one.
  private static func placeholder(_ text: String) -> ((JSONValue) -> Bool)? {
    guard text.hasPrefix("${json-unit.") else { return nil }
    switch text {
    case "${json-unit.ignore}": return { _ in true }
    case "${json-unit.any-string}":
      return {
        if case .string = $0 { return true }
        return false
      }
    case "${json-unit.any-number}":
      return {
        switch $0 {
        case .integer, .double: return true
        default: return false
        }
      }
    case "${json-unit.any-boolean}":
      return {
        if case .bool = $0 { return true }
        return false
      }
    default:
      let prefix = "${json-unit.regex}"
      guard text.hasPrefix(prefix) else { return nil }
      let source = String(text.dropFirst(prefix.count))
      guard let regex = try? NSRegularExpression(pattern: "^(?:" + source + ")$") else {
        return { _ in false }
      }
      return {
        guard case .string(let value) = $0 else { return false }
        return MatchBudget.search(regex, in: value, source: source)
      }
    }
  }

  private static func member(_ key: String) -> String {
    let plain =
      !key.isEmpty && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    return plain ? ".\(key)" : "[\(JSONValue.string(key))]"
  }
}
