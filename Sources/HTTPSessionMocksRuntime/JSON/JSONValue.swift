import Foundation

/// A JSON document as a value, so that two documents compare equal whatever their key order
/// and white space: what the router matches (`jsonBody`, `equalToJson`, `matchesJsonPath`),
/// templates read and the file formats write.
///
/// ``JSONParser`` reads every document (request bodies, files, the admin API's requests) into
/// ``JSONNode``s, which keep what a file says (number literals as written, keys in file order,
/// a key given twice); a ``JSONCursor`` turns them into this value.
package enum JSONValue: Equatable, Sendable, CustomStringConvertible {
  case null
  case bool(Bool)
  case integer(Int64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// Parses `data` (UTF-8, or UTF-16 or UTF-32 told as ``JSONText/utf8(_:)`` tells them; a key
  /// given twice keeps its first value, as `JSONDecoder` kept it), or throws the error that
  /// names the line and column of what is not JSON. Numbers read as ``JSONNumber/value(_:)``
  /// reads them.
  init(parsing data: Data) throws(MockBundleError) {
    self = try JSONCursor.parse(data, source: "body", duplicates: .firstWins).json()
  }

  /// The value of a recorded body that is matched as JSON (see
  /// `RequestMatcher.recordedBody(_:mimeType:)`): it parses, and either `mimeType` names JSON
  /// or the body is an object or an array. `nil` for any other body.
  init?(recordedBody data: Data, mimeType: String?) {
    let type = (mimeType ?? "").split(separator: ";").first.map {
      $0.trimmingCharacters(in: .whitespaces).lowercased()
    }
    let namesJSON =
      type.map { $0 == "application/json" || $0 == "text/json" || $0.hasSuffix("+json") }
      ?? false
    let first = data.first { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
    guard namesJSON || first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
      let value = try? JSONValue(parsing: data)
    else { return nil }
    self = value
  }

  /// Encodes `value` with a plain `JSONEncoder` and parses the result.
  init(encoding value: some Encodable) throws {
    try self.init(parsing: JSONEncoder().encode(value))
  }

  package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.integer(let a), .integer(let b)): return a == b
    case (.integer(let a), .double(let b)): return Double(a) == b
    case (.double(let a), .integer(let b)): return a == Double(b)
    case (.double(let a), .double(let b)): return a == b
    case (.string(let a), .string(let b)): return a == b
    case (.array(let a), .array(let b)): return a == b
    case (.object(let a), .object(let b)): return a == b
    default: return false
    }
  }

  /// The first place where `actual` differs from this (expected) document, depth first with
  /// keys in sorted order: a path such as `$.items[17].done` and the two values there.
  func firstDifference(from actual: JSONValue, at path: String = "$")
    -> (path: String, expected: String, actual: String)?
  {
    switch (self, actual) {
    case (.object(let expected), .object(let got)):
      for key in Set(expected.keys).union(got.keys).sorted() {
        let keyPath = path + Self.member(key)
        switch (expected[key], got[key]) {
        case (let value?, nil): return (keyPath, value.shortDescription, "nothing (missing)")
        case (nil, let value?): return (keyPath, "nothing", "\(value.shortDescription) (extra)")
        case (let value?, let other?):
          if let difference = value.firstDifference(from: other, at: keyPath) { return difference }
        case (nil, nil): continue
        }
      }
      return nil
    case (.array(let expected), .array(let got)):
      for (index, (value, other)) in zip(expected, got).enumerated() {
        if let difference = value.firstDifference(from: other, at: "\(path)[\(index)]") {
          return difference
        }
      }
      if expected.count != got.count {
        return (
          "\(path).count", String(expected.count), "\(got.count)"
        )
      }
      return nil
    default:
      return self == actual ? nil : (path, shortDescription, actual.shortDescription)
    }
  }

  private static func member(_ key: String) -> String {
    let plain =
      !key.isEmpty
      && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    return plain ? ".\(key)" : "[\(JSONValue.string(key))]"
  }

  /// The description, cut to about 100 characters for messages.
  var shortDescription: String {
    let text = description
    return text.count <= 100 ? text : String(text.prefix(100)) + "…"
  }

  /// Compact JSON with sorted keys, for messages.
  package var description: String {
    switch self {
    case .null: return "null"
    case .bool(let value): return String(value)
    case .integer(let value): return String(value)
    case .double(let value): return JSONNumber.text(value)
    case .string(let value):
      let escaped = value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
      return "\"\(escaped)\""
    case .array(let values): return "[" + values.map(\.description).joined(separator: ",") + "]"
    case .object(let members):
      let body = members.sorted { $0.key < $1.key }.map {
        "\(JSONValue.string($0.key)):\($0.value)"
      }
      return "{" + body.joined(separator: ",") + "}"
    }
  }
}

/// Hashing that agrees with `==`: numbers hash by their value as a `Double` (so `1` and `1.0`
/// hash alike), and objects whatever their key order.
extension JSONValue: Hashable {
  package func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let flag):
      hasher.combine(1)
      hasher.combine(flag)
    case .integer(let number):
      hasher.combine(2)
      hasher.combine(Double(number))
    case .double(let number):
      hasher.combine(2)
      hasher.combine(number)
    case .string(let text):
      hasher.combine(3)
      hasher.combine(text)
    case .array(let values):
      hasher.combine(4)
      hasher.combine(values)
    case .object(let members):
      hasher.combine(5)
      hasher.combine(members)
    }
  }
}
