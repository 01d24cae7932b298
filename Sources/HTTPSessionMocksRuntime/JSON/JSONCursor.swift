import Foundation

/// Writes `JSONValue`s as the bundle files want them: pretty printed with sorted keys (a stable,
/// diff-friendly form), or compact with sorted keys (for bodies).
package enum JSONWriter {
  package static func pretty(_ value: JSONValue) -> Data {
    var out = Data()
    write(value, into: &out, indent: 0, pretty: true)
    out.append(UInt8(ascii: "\n"))
    return out
  }

  static func compact(_ value: JSONValue) -> Data {
    var out = Data()
    write(value, into: &out, indent: 0, pretty: false)
    return out
  }

  // Written as UTF-8 bytes straight into the result, never into a String first: a mapping with
  // a 30 MiB body is written once, not three times over (the text, its growth, its bytes).
  private static func write(_ value: JSONValue, into out: inout Data, indent: Int, pretty: Bool) {
    switch value {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
    case .integer(let number): out.append(contentsOf: String(number).utf8)
    case .double(let number):
      // Parsed JSON never holds infinities or NaN; a computed one is written as null.
      out.append(contentsOf: (number.isFinite ? String(number) : "null").utf8)
    case .string(let text): quote(text, into: &out)
    case .array(let values):
      guard !values.isEmpty else {
        out.append(contentsOf: "[]".utf8)
        return
      }
      out.append(UInt8(ascii: "["))
      for (index, element) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        newline(&out, indent + 1, pretty)
        write(element, into: &out, indent: indent + 1, pretty: pretty)
      }
      newline(&out, indent, pretty)
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      guard !members.isEmpty else {
        out.append(contentsOf: "{}".utf8)
        return
      }
      out.append(UInt8(ascii: "{"))
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        newline(&out, indent + 1, pretty)
        quote(key, into: &out)
        out.append(contentsOf: (pretty ? ": " : ":").utf8)
        write(members[key] ?? .null, into: &out, indent: indent + 1, pretty: pretty)
      }
      newline(&out, indent, pretty)
      out.append(UInt8(ascii: "}"))
    }
  }

  private static func newline(_ out: inout Data, _ indent: Int, _ pretty: Bool) {
    guard pretty else { return }
    out.append(UInt8(ascii: "\n"))
    out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
  }

  /// `text` as a JSON string, escaped as the `String` version below escapes it, appended
  /// as UTF-8: runs of bytes that need no escape are copied whole (no byte of a multi-byte
  /// character is below 0x80, so a byte scan finds every character to escape).
  static func quote(_ text: String, into out: inout Data) {
    out.append(UInt8(ascii: "\""))
    var text = text
    text.withUTF8 { bytes in
      var run = 0
      for index in 0..<bytes.count {
        let byte = bytes[index]
        guard byte == 0x22 || byte == 0x5C || byte < 0x20 || byte == 0x7F else { continue }
        out.append(UnsafeBufferPointer(rebasing: bytes[run..<index]))
        switch byte {
        case 0x22: out.append(contentsOf: "\\\"".utf8)
        case 0x5C: out.append(contentsOf: "\\\\".utf8)
        case 0x0A: out.append(contentsOf: "\\n".utf8)
        case 0x0D: out.append(contentsOf: "\\r".utf8)
        case 0x09: out.append(contentsOf: "\\t".utf8)
        default:
          let hex = String(byte, radix: 16)
          out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
        }
        run = index + 1
      }
      out.append(UnsafeBufferPointer(rebasing: bytes[run..<bytes.count]))
    }
    out.append(UInt8(ascii: "\""))
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

/// What a reader does with a key that an object holds more than once.
enum DuplicateKeys {
  /// An error naming the path: our format, whose files this library writes.
  case refused
  /// The last one counts, as in JavaScript's `JSON.parse` (with which browsers read their HAR
  /// files) and Foundation's `JSONSerialization`: foreign formats.
  case lastWins
}

/// A file being read: its name, its bytes as UTF-8 (to turn an offset into a line and column)
/// and its rule for duplicate keys.
final class JSONText: Sendable {
  let source: String
  let data: Data
  let duplicates: DuplicateKeys

  init(_ data: Data, source: String, duplicates: DuplicateKeys) {
    self.data = data
    self.source = source
    self.duplicates = duplicates
  }

  /// `data` as UTF-8: itself, or its text re-encoded when it is UTF-16 or UTF-32, which JSON
  /// files may be (RFC 4627) and `JSONSerialization` reads. The encoding is told as
  /// `JSONSerialization` tells it: by a byte order mark, or by where the first characters
  /// (ASCII in any JSON document) have their zero bytes.
  static func utf8(_ data: Data) -> Data {
    let head = Array(data.prefix(4))
    func at(_ index: Int) -> UInt8? { index < head.count ? head[index] : nil }
    let encoding: String.Encoding
    var mark = 0
    switch (at(0), at(1), at(2), at(3)) {
    case (0x00, 0x00, 0xFE, 0xFF):
      (encoding, mark) = (.utf32BigEndian, 4)
    case (0xFF, 0xFE, 0x00, 0x00):
      (encoding, mark) = (.utf32LittleEndian, 4)
    case (0xFE, 0xFF, _, _):
      (encoding, mark) = (.utf16BigEndian, 2)
    case (0xFF, 0xFE, _, _):
      (encoding, mark) = (.utf16LittleEndian, 2)
    case (0x00, 0x00, 0x00, .some(let byte)) where byte != 0:
      encoding = .utf32BigEndian
    case (.some(let byte), 0x00, 0x00, 0x00) where byte != 0:
      encoding = .utf32LittleEndian
    case (0x00, .some(let byte), _, _) where byte != 0:
      encoding = .utf16BigEndian
    case (.some(let byte), 0x00, _, _) where byte != 0:
      encoding = .utf16LittleEndian
    default:
      return data
    }
    guard let text = String(data: data.dropFirst(mark), encoding: encoding) else { return data }
    return Data(text.utf8)
  }

  /// The line and column of byte `offset`.
  func location(of offset: Int) -> (line: Int, column: Int) {
    data.withUnsafeBytes { raw in
      JSONParser.location(of: offset, in: raw.bindMemory(to: UInt8.self))
    }
  }

  /// The error for a syntax error in this file: `file:3:7: Unexpected end of file ...`.
  func error(_ syntax: JSONSyntaxError) -> MockBundleError {
    let (line, column) = location(of: syntax.offset)
    return MockBundleError(
      .malformed, source: source, line: line, column: column, "not valid JSON: \(syntax.reason)")
  }
}

/// A place in a parsed document, with the path that names it in errors
/// (`entries[12].response.status`). Every read either returns what was asked or throws a
/// ``MockBundleError`` saying what was expected there and what was found.
struct JSONCursor {
  let node: JSONNode
  let path: String
  let text: JSONText

  var source: String { text.source }

  init(_ node: JSONNode, path: String = "", text: JSONText) {
    self.node = node
    self.path = path
    self.text = text
  }

  /// Parses `data` as one JSON document, or throws a malformed-document error that names the
  /// line and column of the syntax error and what is wrong there.
  static func parse(
    _ data: Data, source: String, duplicates: DuplicateKeys,
    dialect: JSONParser.Dialect = .standard
  ) throws(MockBundleError) -> JSONCursor {
    let data = JSONText.utf8(data)
    let text = JSONText(data, source: source, duplicates: duplicates)
    let parsed: Result<JSONNode, JSONSyntaxError> = data.withUnsafeBytes { raw in
      var parser = JSONParser(raw.bindMemory(to: UInt8.self))
      parser.dialect = dialect
      do throws(JSONSyntaxError) {
        return .success(try parser.document())
      } catch {
        return .failure(error)
      }
    }
    switch parsed {
    case .success(let node): return JSONCursor(node, text: text)
    case .failure(let error): throw text.error(error)
    }
  }

  func fail(_ problem: String, kind: MockBundleError.Kind = .malformed) -> MockBundleError {
    MockBundleError(kind, source: source, path: path, problem)
  }

  func expected(_ what: String) -> MockBundleError {
    if case .unreadable(let flaw) = node { return unreadable(flaw) }
    return fail("expected \(what), got \(found)")
  }

  /// The error for a value the parser could not read, with its line and column.
  private func unreadable(_ flaw: JSONFlaw) -> MockBundleError {
    let (line, column) = text.location(of: flaw.offset)
    return MockBundleError(
      .malformed, source: source, path: path, line: line, column: column, flaw.reason)
  }

  /// What is here, for messages: `"abc"`, `12`, `true`, `null`, `an object`, `an array`.
  var found: String {
    switch node {
    case .null: return "null"
    case .bool(let flag): return String(flag)
    case .number(let text): return text.count > 40 ? String(text.prefix(40)) + "…" : text
    case .string(let text):
      var quoted = ""
      JSONWriter.quote(text.count > 60 ? String(text.prefix(60)) + "…" : text, into: &quoted)
      return quoted
    case .array: return "an array"
    case .object: return "an object"
    case .unreadable: return "a string that is not text"
    }
  }

  /// The path of member `key`: `.key`, or `["key"]` (JSON-quoted) when the key is not a plain
  /// name, so that a key holding `.` or `[` cannot make the path ambiguous.
  func child(_ key: String) -> String {
    let plain =
      key.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true
      && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    guard plain else {
      var quoted = ""
      JSONWriter.quote(key, into: &quoted)
      return "\(path)[\(quoted)]"
    }
    return path.isEmpty ? key : "\(path).\(key)"
  }

  /// The cursor of member `key`'s value `node`.
  func member(_ key: String, _ node: JSONNode) -> JSONCursor {
    JSONCursor(node, path: child(key), text: text)
  }

  /// The members, each key once: a key given twice is an error under ``DuplicateKeys/refused``,
  /// and its last value counts under ``DuplicateKeys/lastWins``.
  func members() throws(MockBundleError) -> [JSONMember] {
    guard case .object(let members) = node else { throw expected("an object") }
    guard let repeated = Self.firstRepeatedKey(members) else { return members }
    switch text.duplicates {
    case .refused: throw duplicate(repeated)
    case .lastWins:
      var last: [String: Int] = [:]
      for (index, member) in members.enumerated() { last[member.key] = index }
      return members.enumerated().compactMap { index, member in
        last[member.key] == index ? member : nil
      }
    }
  }

  /// The keys, each once, in file order.
  func keys() throws(MockBundleError) -> [String] {
    try members().map(\.key)
  }

  private static func firstRepeatedKey(_ members: [JSONMember]) -> String? {
    if members.count <= 12 {
      for index in members.indices.dropFirst() {
        let key = members[index].key
        for earlier in members[..<index] where earlier.key == key { return key }
      }
      return nil
    }
    var seen: Set<String> = []
    for member in members where !seen.insert(member.key).inserted { return member.key }
    return nil
  }

  private func duplicate(_ key: String) -> MockBundleError {
    JSONCursor(.null, path: child(key), text: text).fail(
      "the key \"\(key)\" appears more than once in this object; a bundle.json gives each key "
        + "once (which one was meant is unclear)")
  }

  /// Whether the object has a member `key`.
  func has(_ key: String) throws(MockBundleError) -> Bool {
    try optional(key) != nil
  }

  /// The member `key`, or `nil` when the object lacks it.
  func optional(_ key: String) throws(MockBundleError) -> JSONCursor? {
    guard case .object(let members) = node else { throw expected("an object") }
    var found: JSONNode?
    for member in members where member.key == key {
      if found != nil, text.duplicates == .refused { throw duplicate(key) }
      found = member.value
    }
    return found.map { member(key, $0) }
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
    for key in try keys().sorted() where !known.contains(key) {
      throw JSONCursor(.null, path: child(key), text: text).fail(
        "unknown member; expected one of " + known.sorted().joined(separator: ", "))
    }
  }

  /// Throws when a member that the reader uses is absent and the object has an unknown member
  /// whose name is a slip of it (`txet` for `text`, `Status` for `status`): a foreign format
  /// ignores members it does not know, so a misspelt name would otherwise drop what it held
  /// silently. `known` lists every member the format defines; names starting with `_` are
  /// custom fields (HAR's convention) and never count as slips.
  func rejectMisspellings(of used: [String], known: Set<String>) throws(MockBundleError) {
    guard case .object(let members) = node else { return }
    for name in used where !members.contains(where: { $0.key == name }) {
      for member in members
      where !member.key.hasPrefix("_") && !known.contains(member.key)
        && Self.isSlip(member.key, of: name)
      {
        throw JSONCursor(member.value, path: child(member.key), text: text).fail(
          "not a member this format knows; it looks like a misspelling of \"\(name)\", which is "
            + "missing (custom members start with \"_\")")
      }
    }
  }

  /// Whether `key` is `name` with a slip: another case, or one or two letters changed, added,
  /// removed or swapped (one for names of four letters or fewer).
  static func isSlip(_ key: String, of name: String) -> Bool {
    let a = Array(key.lowercased().utf8)
    let b = Array(name.lowercased().utf8)
    if a == b { return true }
    let allowed = b.count <= 4 ? 1 : 2
    guard abs(a.count - b.count) <= allowed, b.count >= 3 else { return false }
    // The optimal string alignment distance (Damerau-Levenshtein without repeated edits).
    var before = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], before[j - 2] + 1)
        }
      }
      (before, previous, current) = (previous, current, before)
    }
    return previous[b.count] <= allowed
  }

  func elements() throws(MockBundleError) -> [JSONCursor] {
    guard case .array(let values) = node else { throw expected("an array") }
    return values.enumerated().map {
      JSONCursor($0.element, path: "\(path)[\($0.offset)]", text: text)
    }
  }

  func string() throws(MockBundleError) -> String {
    guard case .string(let text) = node else { throw expected("a string") }
    return text
  }

  func integer() throws(MockBundleError) -> Int {
    guard case .number(let literal) = node else { throw expected("a number") }
    if let exact = Int(literal) { return exact }
    guard let number = Double(literal), number.isFinite else {
      throw fail("Number \(found) is not representable; expected a whole number")
    }
    guard let exact = Int(exactly: number) else { throw expected("a whole number") }
    return exact
  }

  /// A finite number, or `nil` when the value is anything else (for fields that only inform).
  var finiteNumber: Double? {
    guard case .number(let literal) = node, let number = Double(literal), number.isFinite else {
      return nil
    }
    return number
  }

  func bool() throws(MockBundleError) -> Bool {
    guard case .bool(let flag) = node else { throw expected("true or false") }
    return flag
  }

  /// Whether the value is JSON `null`.
  var isNull: Bool {
    if case .null = node { return true }
    return false
  }

  /// A string, or `nil` for JSON `null`.
  func stringOrNull() throws(MockBundleError) -> String? {
    if case .null = node { return nil }
    guard case .string(let text) = node else { throw expected("a string or null") }
    return text
  }

  /// A string, or `nil` when the member is JSON `null`: the reading of an optional member.
  func optionalString(_ key: String) throws(MockBundleError) -> String? {
    try optional(key)?.stringOrNull()
  }

  /// The value as a ``JSONValue``, for JSON bodies: numbers by value, keys by the document's
  /// rule for duplicates.
  func json() throws(MockBundleError) -> JSONValue {
    switch node {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .number(let literal):
      if let integer = Int64(literal) { return .integer(integer) }
      // Read as a request's JSON body is read (JSONDecoder), so that the two compare equal
      // even where JSONDecoder rounds differently (a fraction beyond a Double's precision).
      guard let value = try? JSONValue(parsing: Data(literal.utf8)) else {
        throw fail("Number \(found) is not representable")
      }
      return value
    case .string(let text): return .string(text)
    case .array:
      var values: [JSONValue] = []
      for element in try elements() { values.append(try element.json()) }
      return .array(values)
    case .object:
      var values: [String: JSONValue] = [:]
      for member in try members() {
        values[member.key] = try self.member(member.key, member.value).json()
      }
      return .object(values)
    case .unreadable(let flaw): throw unreadable(flaw)
    }
  }
}

extension JSONCursor {
  /// The value as compact JSON in the document's own order, numbers as ``plainNumber(_:)``
  /// writes them: how WireMock (Jackson) writes a mapping's `jsonBody` back out.
  func compactText() throws(MockBundleError) -> Data {
    var out = ""
    try Self.write(node, into: &out, at: self)
    return Data(out.utf8)
  }

  /// A JSON number literal as WireMock 2.35.1 writes a `jsonBody` number (Jackson reads it
  /// as a `BigDecimal` and writes it plain, without trailing zeros): `1.0` is `1`, `1e2` is
  /// `100`, `-0.0` is `0`, `1E-7` is `0.0000001`, `1.23e20` is `123000000000000000000`; every
  /// digit is kept. An exponent beyond ±10,000 (which no `Double` reaches) is left as written.
  static func plainNumber(_ literal: String) -> String {
    var text = Substring(literal)
    let negative = text.first == "-"
    if negative { text = text.dropFirst() }
    var exponent = 0
    if let mark = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      guard let value = Int(text[text.index(after: mark)...]), abs(value) <= 10_000 else {
        return literal
      }
      exponent = value
      text = text[..<mark]
    }
    let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    var digits = Array(parts[0].utf8)
    if parts.count > 1 { digits += Array(parts[1].utf8) }
    // Where the decimal point falls among `digits`.
    var point = parts[0].utf8.count + exponent
    let zero = UInt8(ascii: "0")
    let leading = digits.prefix { $0 == zero }.count
    digits.removeFirst(leading)
    point -= leading
    while digits.count > max(point, 0), digits.last == zero { digits.removeLast() }
    guard !digits.isEmpty else { return "0" }
    var out = negative ? "-" : ""
    if point <= 0 {
      out += "0." + String(repeating: "0", count: -point) + String(decoding: digits, as: UTF8.self)
    } else if point >= digits.count {
      out +=
        String(decoding: digits, as: UTF8.self)
        + String(repeating: "0", count: point - digits.count)
    } else {
      out +=
        String(decoding: digits[..<point], as: UTF8.self) + "."
        + String(decoding: digits[point...], as: UTF8.self)
    }
    return out
  }

  private static func write(_ node: JSONNode, into out: inout String, at cursor: JSONCursor)
    throws(MockBundleError)
  {
    switch node {
    case .null: out += "null"
    case .bool(let flag): out += flag ? "true" : "false"
    case .number(let literal): out += plainNumber(literal)
    case .string(let text): JSONWriter.quote(text, into: &out)
    case .array(let values):
      out += "["
      for (index, value) in values.enumerated() {
        if index > 0 { out += "," }
        try write(value, into: &out, at: cursor)
      }
      out += "]"
    case .object:
      out += "{"
      for (index, member) in try JSONCursor(node, path: cursor.path, text: cursor.text).members()
        .enumerated()
      {
        if index > 0 { out += "," }
        JSONWriter.quote(member.key, into: &out)
        out += ":"
        try write(member.value, into: &out, at: cursor.member(member.key, member.value))
      }
      out += "}"
    case .unreadable:
      throw JSONCursor(node, path: cursor.path, text: cursor.text).expected("JSON")
    }
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
        if depth == 0 && expectKey {
          let key = String(decoding: text, as: UTF8.self)
          // A HAR file is told by its "log" (almost always its first key): the rest, often
          // megabytes, need not be scanned.
          if key == "log" { return [key] }
          keys.insert(key)
        }
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
