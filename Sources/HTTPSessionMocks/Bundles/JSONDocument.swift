import Foundation

/// Writes `JSONValue`s as the bundle files want them: pretty printed with sorted keys (a stable,
/// diff-friendly form), or compact with sorted keys (for bodies).
enum JSONWriter {
  static func pretty(_ value: JSONValue) -> Data {
    var out = ""
    write(value, into: &out, indent: 0, pretty: true)
    out += "\n"
    return Data(out.utf8)
  }

  static func compact(_ value: JSONValue) -> Data {
    var out = ""
    write(value, into: &out, indent: 0, pretty: false)
    return Data(out.utf8)
  }

  private static func write(_ value: JSONValue, into out: inout String, indent: Int, pretty: Bool) {
    switch value {
    case .null: out += "null"
    case .bool(let flag): out += flag ? "true" : "false"
    case .integer(let number): out += String(number)
    case .double(let number):
      // Parsed JSON never holds infinities or NaN; a computed one is written as null.
      out += number.isFinite ? String(number) : "null"
    case .string(let text): quote(text, into: &out)
    case .array(let values):
      guard !values.isEmpty else {
        out += "[]"
        return
      }
      out += "["
      for (index, element) in values.enumerated() {
        if index > 0 { out += "," }
        newline(&out, indent + 1, pretty)
        write(element, into: &out, indent: indent + 1, pretty: pretty)
      }
      newline(&out, indent, pretty)
      out += "]"
    case .object(let members):
      guard !members.isEmpty else {
        out += "{}"
        return
      }
      out += "{"
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { out += "," }
        newline(&out, indent + 1, pretty)
        quote(key, into: &out)
        out += pretty ? ": " : ":"
        write(members[key] ?? .null, into: &out, indent: indent + 1, pretty: pretty)
      }
      newline(&out, indent, pretty)
      out += "}"
    }
  }

  private static func newline(_ out: inout String, _ indent: Int, _ pretty: Bool) {
    guard pretty else { return }
    out += "\n"
    out += String(repeating: "  ", count: indent)
  }

  static func quote(_ text: String, into out: inout String) {
    out += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        out +=
          "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
          + String(scalar.value, radix: 16)
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}

/// A place in a parsed document, with the path that names it in errors
/// (`entries[12].response.status`). Every read either returns what was asked or throws a
/// ``MockBundleError`` saying what was expected there and what was found.
struct JSONCursor {
  let value: JSONValue
  let path: String
  let source: String

  init(_ value: JSONValue, path: String = "", source: String) {
    self.value = value
    self.path = path
    self.source = source
  }

  /// Parses `data` as JSON, or throws a malformed-document error.
  static func parse(_ data: Data, source: String) throws(MockBundleError) -> JSONCursor {
    do {
      return JSONCursor(try JSONValue(parsing: data), source: source)
    } catch {
      throw MockBundleError(
        .malformed, source: source, "not valid JSON (\(JSONCursor.reason(of: error)))")
    }
  }

  private static func reason(of error: any Error) -> String {
    if case DecodingError.dataCorrupted(let context) = error {
      let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey]
      return (underlying as? String) ?? context.debugDescription
    }
    return String(describing: error)
  }

  func fail(_ problem: String, kind: MockBundleError.Kind = .malformed) -> MockBundleError {
    MockBundleError(kind, source: source, path: path, problem)
  }

  func expected(_ what: String) -> MockBundleError {
    fail("expected \(what), got \(found)")
  }

  /// What is here, for messages: `"abc"`, `12`, `true`, `null`, `an object`, `an array`.
  var found: String {
    switch value {
    case .null: return "null"
    case .bool(let flag): return String(flag)
    case .integer(let number): return String(number)
    case .double(let number): return String(number)
    case .string(let text):
      var quoted = ""
      JSONWriter.quote(text.count > 60 ? String(text.prefix(60)) + "…" : text, into: &quoted)
      return quoted
    case .array: return "an array"
    case .object: return "an object"
    }
  }

  func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  func members() throws(MockBundleError) -> [String: JSONValue] {
    guard case .object(let members) = value else { throw expected("an object") }
    return members
  }

  /// The member `key`, or `nil` when the object lacks it.
  func optional(_ key: String) throws(MockBundleError) -> JSONCursor? {
    guard let member = try members()[key] else { return nil }
    return JSONCursor(member, path: child(key), source: source)
  }

  func required(_ key: String, _ what: String) throws(MockBundleError) -> JSONCursor {
    guard let member = try optional(key) else {
      throw fail("expected a member \"\(key)\" (\(what))")
    }
    return member
  }

  /// Throws when the object has a member not in `known` (a misspelt name would otherwise be
  /// ignored silently).
  func rejectUnknownMembers(_ known: Set<String>) throws(MockBundleError) {
    for key in try members().keys.sorted() where !known.contains(key) {
      throw JSONCursor(.null, path: child(key), source: source).fail(
        "unknown member; expected one of " + known.sorted().joined(separator: ", "))
    }
  }

  func elements() throws(MockBundleError) -> [JSONCursor] {
    guard case .array(let values) = value else { throw expected("an array") }
    return values.enumerated().map {
      JSONCursor($0.element, path: "\(path)[\($0.offset)]", source: source)
    }
  }

  func string() throws(MockBundleError) -> String {
    guard case .string(let text) = value else { throw expected("a string") }
    return text
  }

  func integer() throws(MockBundleError) -> Int {
    switch value {
    case .integer(let number):
      if let exact = Int(exactly: number) { return exact }
    case .double(let number):
      if let exact = Int(exactly: number) { return exact }
      throw expected("a whole number")
    default: break
    }
    throw expected("a number")
  }

  func bool() throws(MockBundleError) -> Bool {
    guard case .bool(let flag) = value else { throw expected("true or false") }
    return flag
  }

  /// A string, or `nil` for JSON `null`.
  func stringOrNull() throws(MockBundleError) -> String? {
    if case .null = value { return nil }
    guard case .string(let text) = value else { throw expected("a string or null") }
    return text
  }
}

/// What a document is at its top level, found without parsing it all: HAR files run to
/// megabytes and are parsed once, by their own reader.
enum JSONShape: Equatable {
  case array
  case object(keys: Set<String>)
  case other

  init(sniffing data: Data) {
    var bytes = data[...]
    // A byte order mark, as some editors write.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    bytes = bytes.drop { Self.isSpace($0) }
    switch bytes.first {
    case UInt8(ascii: "["): self = .array
    case UInt8(ascii: "{"): self = .object(keys: Self.topLevelKeys(bytes.dropFirst()))
    default: self = .other
    }
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// The keys of the top-level object whose body starts `bytes`: strings met at depth zero
  /// right after `{` or `,`. Stops at the first thing it does not expect.
  private static func topLevelKeys(_ bytes: Data.SubSequence) -> Set<String> {
    var keys: Set<String> = []
    var depth = 0
    var expectKey = true
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        var end = bytes.index(after: index)
        var escaped = false
        var text: [UInt8] = []
        while end < bytes.endIndex {
          let next = bytes[end]
          if escaped {
            escaped = false
            text.append(next)
          } else if next == UInt8(ascii: "\\") {
            escaped = true
          } else if next == UInt8(ascii: "\"") {
            break
          } else {
            text.append(next)
          }
          end = bytes.index(after: end)
        }
        if depth == 0 && expectKey { keys.insert(String(decoding: text, as: UTF8.self)) }
        expectKey = false
        index = end
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
        expectKey = false
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        if depth == 0 { return keys }
        depth -= 1
      case UInt8(ascii: ","):
        if depth == 0 { expectKey = true }
      default: break
      }
      if index < bytes.endIndex { index = bytes.index(after: index) }
    }
    return keys
  }
}
