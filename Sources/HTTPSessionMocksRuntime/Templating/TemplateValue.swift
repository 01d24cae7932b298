import Foundation

/// A value a template reads or a helper returns, rendered as Handlebars.java renders the Java
/// value WireMock would hold.
enum TemplateValue: Sendable {
  case null
  case bool(Bool)
  case integer(Int64)
  case double(Double)
  case string(String)
  /// Text a block helper rendered: output as it is, never escaped again (Handlebars'
  /// `SafeString`).
  case safe(String)
  /// A list. `json` lists (from `jsonPath`) render as compact JSON; the others (the request's
  /// path segments) as the path they make, `/a/b`, as WireMock's `pathSegments` does.
  case array([TemplateValue], json: Bool)
  /// An object with its members in order. `json` objects render as Jackson's pretty JSON, the
  /// others as Java's `{a=1, b=2}`; `caseInsensitive` ones (headers) find keys in any case.
  case object([(key: String, value: TemplateValue)], json: Bool, caseInsensitive: Bool)
  /// The values of a query parameter or header: renders its first value, iterates them all
  /// (WireMock's `ListOrSingle`).
  case values([String])
  case date(Date)

  init(json: JSONValue) {
    switch json {
    case .null: self = .null
    case .bool(let value): self = .bool(value)
    case .integer(let value): self = .integer(value)
    case .double(let value): self = .double(value)
    case .string(let value): self = .string(value)
    case .array(let values): self = .array(values.map(TemplateValue.init(json:)), json: true)
    case .object(let members):
      self = .object(
        members.sorted { $0.key < $1.key }.map { ($0.key, TemplateValue(json: $0.value)) },
        json: true, caseInsensitive: false)
    }
  }

  /// Handlebars.java's emptiness: `null`, `false`, `""`, `0` and empty lists are falsy.
  var isTruthy: Bool {
    switch self {
    case .null: return false
    case .bool(let value): return value
    case .integer(let value): return value != 0
    case .double(let value): return value != 0
    case .string(let text), .safe(let text): return !text.isEmpty
    case .array(let values, _): return !values.isEmpty
    case .values(let values): return !values.isEmpty
    case .object, .date: return true
    }
  }

  /// The member or element `segment` names, or `.null`.
  func member(_ segment: String) -> TemplateValue {
    switch self {
    case .object(let members, _, let caseInsensitive):
      if let found = members.first(where: { $0.key == segment }) { return found.value }
      if caseInsensitive,
        let found = members.first(where: {
          $0.key.caseInsensitiveCompare(segment) == .orderedSame
        })
      {
        return found.value
      }
      return .null
    case .array(let values, _):
      guard let index = Int(segment), values.indices.contains(index) else { return .null }
      return values[index]
    case .values(let values):
      guard let index = Int(segment), values.indices.contains(index) else { return .null }
      return .string(values[index])
    default:
      return .null
    }
  }

  /// The elements `#each` goes through, with their keys for objects.
  var elements: [(key: String?, value: TemplateValue)] {
    switch self {
    case .array(let values, _): return values.map { (nil, $0) }
    case .values(let values): return values.map { (nil, .string($0)) }
    case .object(let members, _, _): return members.map { ($0.key, $0.value) }
    default: return []
    }
  }

  /// The text of the value, as Handlebars.java writes the Java object WireMock holds.
  var text: String {
    switch self {
    case .null: return ""
    case .bool(let value): return value ? "true" : "false"
    case .integer(let value): return String(value)
    case .double(let value): return Self.javaDouble(value)
    case .string(let text), .safe(let text): return text
    case .values(let values): return values.first ?? ""
    case .date(let date): return Self.iso8601(date)
    case .array(let values, let json):
      if json { return Self.json(self, pretty: false, indent: 0) }
      return "/" + values.map(\.text).joined(separator: "/")
    case .object(let members, let json, _):
      if json { return Self.json(self, pretty: true, indent: 0) }
      return "{" + members.map { "\($0.key)=\($0.value.text)" }.joined(separator: ", ") + "}"
    }
  }

  /// The value as a number, if it is one or is text that reads as one.
  var number: Double? {
    switch self {
    case .integer(let value): return Double(value)
    case .double(let value): return value
    case .string(let text), .safe(let text):
      return Double(text.trimmingCharacters(in: .whitespaces))
    case .values(let values): return values.first.flatMap { Double($0) }
    case .bool(let value): return value ? 1 : 0
    default: return nil
    }
  }

  /// Java's `Double.toString`: `7.0`, `0.5`, `1.0E-7`, `1.0E10`.
  static func javaDouble(_ value: Double) -> String {
    guard value.isFinite else {
      return value.isNaN ? "NaN" : (value < 0 ? "-Infinity" : "Infinity")
    }
    let magnitude = abs(value)
    if magnitude == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
    if magnitude >= 1e-3 && magnitude < 1e7 {
      if value == value.rounded() { return String(Int64(value)) + ".0" }
      return "\(value)"
    }
    // Scientific: mantissa with at least one decimal, exponent without padding.
    let exponent = Int(floor(log10(magnitude)))
    var mantissa = value / pow(10, Double(exponent))
    var power = exponent
    if abs(mantissa) >= 10 {
      mantissa /= 10
      power += 1
    }
    var text = "\(mantissa)"
    if !text.contains(".") { text += ".0" }
    return text + "E" + String(power)
  }

  static func iso8601(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
  }

  /// JSON text as Jackson writes it: compact (`["a","b"]`), or pretty with `" : "` and
  /// two-space indentation.
  private static func json(_ value: TemplateValue, pretty: Bool, indent: Int) -> String {
    switch value {
    case .null: return "null"
    case .bool, .integer, .double: return value.text
    case .string(let text), .safe(let text):
      var out = ""
      JSONWriter.quote(text, into: &out)
      return out
    case .values(let values):
      return json(.array(values.map { .string($0) }, json: true), pretty: pretty, indent: indent)
    case .date: return "\"\(value.text)\""
    case .array(let values, _):
      if values.isEmpty { return pretty ? "[ ]" : "[]" }
      if !pretty {
        return "[" + values.map { json($0, pretty: false, indent: 0) }.joined(separator: ",") + "]"
      }
      return "[ "
        + values.map { json($0, pretty: true, indent: indent + 1) }.joined(separator: ", ") + " ]"
    case .object(let members, _, _):
      if members.isEmpty { return pretty ? "{ }" : "{}" }
      func key(_ text: String) -> String {
        var out = ""
        JSONWriter.quote(text, into: &out)
        return out
      }
      if !pretty {
        return "{"
          + members.map { key($0.key) + ":" + json($0.value, pretty: false, indent: 0) }
          .joined(separator: ",") + "}"
      }
      let inner = String(repeating: "  ", count: indent + 1)
      let outer = String(repeating: "  ", count: indent)
      return "{\n"
        + members.map {
          inner + key($0.key) + " : " + json($0.value, pretty: true, indent: indent + 1)
        }
        .joined(separator: ",\n") + "\n" + outer + "}"
    }
  }
}
