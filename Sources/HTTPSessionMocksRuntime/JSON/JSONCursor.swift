import Foundation

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
    try JSONText.read(data, source: source, duplicates: duplicates, dialect: dialect) {
      parser, text in JSONCursor(try parser.document(), text: text)
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
  /// its last value counts under ``DuplicateKeys/lastWins`` and its first under
  /// ``DuplicateKeys/firstWins``.
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
    case .firstWins:
      var seen: Set<String> = []
      return members.filter { seen.insert($0.key).inserted }
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
      if found != nil {
        if text.duplicates == .refused { throw duplicate(key) }
        if text.duplicates == .firstWins { break }
      }
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
      guard let value = JSONNumber.value(literal) else {
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
  /// The value as compact JSON in the document's own order, numbers as ``JSONNumber/plain(_:)``
  /// writes them: how WireMock (Jackson) writes a mapping's `jsonBody` back out.
  func compactText() throws(MockBundleError) -> Data {
    var out = ""
    try Self.write(node, into: &out, at: self)
    return Data(out.utf8)
  }

  private static func write(_ node: JSONNode, into out: inout String, at cursor: JSONCursor)
    throws(MockBundleError)
  {
    switch node {
    case .null: out += "null"
    case .bool(let flag): out += flag ? "true" : "false"
    case .number(let literal): out += JSONNumber.plain(literal)
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
