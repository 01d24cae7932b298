import Foundation

/// Parses JSON (RFC 8259) from bytes into ``JSONNode``s, or skips values after checking their
/// syntax: the bundle readers' parser.
///
/// It takes a whole document (``document()``) or walks one piece by piece (``beginObject()``,
/// ``nextMember()``, ``beginArray()``, ``nextElement()``), so that the HAR reader turns a large
/// recording into entries one at a time instead of building the whole tree first. A syntax error
/// carries its byte offset, which ``location(of:in:)`` turns into a line and column. Nesting
/// deeper than ``maximumDepth`` is a syntax error, as in `JSONSerialization`. Strings are checked
/// for UTF-8 and surrogates only when parsed into a node, and even then a string that is not
/// text is kept as a ``JSONFlaw``, so that only a value a reader uses can fail the file.
struct JSONParser {
  /// How deep arrays and objects may nest (`JSONSerialization`'s limit).
  static let maximumDepth = 512

  /// What a document may hold beyond RFC 8259.
  struct Dialect {
    /// Whether a `,` may come before a closing `]` or `}` (JSONSerialization and JSONDecoder
    /// accept one, so this package's own files may have one).
    var trailingCommas = true
    /// Whether `// line` and `/* block */` comments may stand where white space may.
    var comments = false
    /// Whether a string or key may be written in single quotes (`'text'`, with `\'`).
    var singleQuotes = false

    /// RFC 8259 and trailing commas: this package's own formats.
    static let standard = Dialect()
    /// What WireMock 2.35.1 (Jackson, as WireMock configures it) reads: comments and single
    /// quotes, but no trailing comma ("Unexpected character ('}')"), measured on the jar.
    static let wireMock = Dialect(trailingCommas: false, comments: true, singleQuotes: true)
  }

  /// What this parser accepts beyond RFC 8259.
  var dialect = Dialect.standard

  private let bytes: UnsafeBufferPointer<UInt8>
  private(set) var offset: Int
  private var depth = 0
  /// The bytes of a string with escapes, reused from one string to the next.
  private var scratch: [UInt8] = []

  /// A parser at the start of `bytes`, after a UTF-8 byte order mark if there is one.
  init(_ bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
    let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
    offset = bytes.starts(with: mark) ? 3 : 0
  }

  // MARK: - Whole values

  /// The one value of the document; anything but white space after it is an error.
  mutating func document() throws(JSONSyntaxError) -> JSONNode {
    let value = try self.value()
    try end()
    return value
  }

  /// Checks that only white space is left.
  mutating func end() throws(JSONSyntaxError) {
    skipSpace()
    guard offset == bytes.count else {
      throw fail("Unexpected \(shown(offset)) after the end of the document")
    }
  }

  /// The next value, parsed whole.
  mutating func value() throws(JSONSyntaxError) -> JSONNode {
    switch try peek() {
    case UInt8(ascii: "{"):
      try beginObject()
      var members: [JSONMember] = []
      while let key = try nextMember() {
        members.append(JSONMember(key: key, value: try value()))
      }
      return .object(members)
    case UInt8(ascii: "["):
      try beginArray()
      var elements: [JSONNode] = []
      while try nextElement() { elements.append(try value()) }
      return .array(elements)
    case UInt8(ascii: "\""):
      return try string()
    case UInt8(ascii: "'") where dialect.singleQuotes:
      return try string()
    default:
      return try scalar()
    }
  }

  /// Checks the syntax of the next value and moves past it without keeping it.
  mutating func skipValue() throws(JSONSyntaxError) {
    switch try peek() {
    case UInt8(ascii: "{"):
      try beginObject()
      while try skipKey() { try skipValue() }
    case UInt8(ascii: "["):
      try beginArray()
      while try nextElement() { try skipValue() }
    case UInt8(ascii: "\""):
      try skipString()
    case UInt8(ascii: "'") where dialect.singleQuotes:
      try skipString()
    default:
      _ = try scalar()
    }
  }

  // MARK: - Piece by piece

  /// The first byte of the next value, after white space (`{`, `[`, `"`, a digit...).
  mutating func peek() throws(JSONSyntaxError) -> UInt8 {
    skipSpace()
    guard offset < bytes.count else {
      throw fail("Unexpected end of file (expected a value)")
    }
    return bytes[offset]
  }

  /// Moves into the object that starts here; ``nextMember()`` then reads its keys.
  mutating func beginObject() throws(JSONSyntaxError) {
    try open(UInt8(ascii: "{"))
  }

  /// Moves into the array that starts here; ``nextElement()`` then says whether a value follows.
  mutating func beginArray() throws(JSONSyntaxError) {
    try open(UInt8(ascii: "["))
  }

  /// The key of the next member of the current object, with its colon read (the value follows),
  /// or `nil` when the object ends.
  mutating func nextMember() throws(JSONSyntaxError) -> String? {
    guard try nextItem(closing: UInt8(ascii: "}"), what: "object member") else { return nil }
    guard isQuote(try peek()) else {
      throw fail("Expected a key (a string in double quotes), found \(shown(offset))")
    }
    let key: String
    switch try string() {
    case .string(let text): key = text
    case .unreadable(let flaw):
      // A key names what a reader looks for: one that is not text cannot be looked for, so
      // the file is refused at the key, as JSONSerialization refuses it.
      throw JSONSyntaxError(offset: flaw.offset, reason: "\(flaw.reason) (an object's key)")
    default: key = String(decoding: scratch, as: UTF8.self)
    }
    try colon()
    return key
  }

  /// Whether another element of the current array follows; `false` when the array ends.
  mutating func nextElement() throws(JSONSyntaxError) -> Bool {
    try nextItem(closing: UInt8(ascii: "]"), what: "array element")
  }

  /// The offset of the `]` or `}` that the last ``nextElement()`` or ``nextMember()`` returning
  /// false or `nil` read.
  private(set) var lastClose = 0

  // MARK: - Locations

  /// The line and column (both from 1; the column counts characters) of byte `offset` in
  /// `bytes`.
  static func location(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (
    line: Int, column: Int
  ) {
    var line = 1
    var column = 1
    for byte in bytes[..<min(offset, bytes.count)] {
      if byte == UInt8(ascii: "\n") {
        line += 1
        column = 1
      } else if byte & 0xC0 != 0x80 {
        column += 1
      }
    }
    return (line, column)
  }

  // MARK: - Machinery

  /// For each array or object open, whether an item of it has been read (every later item
  /// needs a `,` before it).
  private var itemsRead: [Bool] = []

  private mutating func open(_ byte: UInt8) throws(JSONSyntaxError) {
    guard try peek() == byte else {
      throw fail("Expected \"\(Character(Unicode.Scalar(byte)))\", found \(shown(offset))")
    }
    depth += 1
    guard depth <= Self.maximumDepth else {
      throw fail("Too many nested arrays or dictionaries (more than \(Self.maximumDepth))")
    }
    offset += 1
    itemsRead.append(false)
  }

  /// Whether another item of the innermost open array or object follows: reads the `,` before
  /// it, or the closing byte (then the container is closed).
  private mutating func nextItem(closing: UInt8, what: String) throws(JSONSyntaxError) -> Bool {
    skipSpace()
    guard offset < bytes.count else {
      throw fail(
        "Unexpected end of file (the \(closing == UInt8(ascii: "]") ? "array" : "object") "
          + "is not closed)")
    }
    let started = itemsRead[itemsRead.count - 1]
    if started && bytes[offset] != closing {
      guard bytes[offset] == UInt8(ascii: ",") else {
        throw fail(
          "Expected \",\" or \"\(Character(Unicode.Scalar(closing)))\" after an \(what), found "
            + shown(offset))
      }
      offset += 1
      // A trailing comma closes as well: JSONSerialization and JSONDecoder accept one, so
      // files that they read before keep loading. WireMock's files may not have one.
      skipSpace()
      guard offset < bytes.count else {
        throw fail("Unexpected end of file (expected a value after \",\")")
      }
      if bytes[offset] == closing && !dialect.trailingCommas {
        throw fail(
          "Unexpected \(shown(offset)) after \",\": a trailing comma, which WireMock refuses "
            + "(\"Unexpected character ('\(Character(Unicode.Scalar(closing)))')\"); remove the comma"
        )
      }
    }
    if bytes[offset] == closing {
      offset += 1
      lastClose = offset - 1
      itemsRead.removeLast()
      depth -= 1
      return false
    }
    itemsRead[itemsRead.count - 1] = true
    return true
  }

  private mutating func skipKey() throws(JSONSyntaxError) -> Bool {
    guard try nextItem(closing: UInt8(ascii: "}"), what: "object member") else { return false }
    guard isQuote(try peek()) else {
      throw fail("Expected a key (a string in double quotes), found \(shown(offset))")
    }
    try skipString()
    try colon()
    return true
  }

  private mutating func colon() throws(JSONSyntaxError) {
    skipSpace()
    guard offset < bytes.count else {
      throw fail("Unexpected end of file (expected \":\" after a key)")
    }
    guard bytes[offset] == UInt8(ascii: ":") else {
      throw fail("Expected \":\" after a key, found \(shown(offset))")
    }
    offset += 1
  }

  private mutating func skipSpace() {
    while offset < bytes.count {
      switch bytes[offset] {
      case 0x20, 0x0A, 0x0D, 0x09: offset += 1
      case UInt8(ascii: "/") where dialect.comments && offset + 1 < bytes.count:
        guard skipComment() else { return }
      default: return
      }
    }
  }

  /// Moves past the `//` or `/* */` comment that starts here (an unclosed one runs to the end
  /// of the file); `false`, without moving, when no comment starts here.
  private mutating func skipComment() -> Bool {
    switch bytes[offset + 1] {
    case UInt8(ascii: "/"):
      offset += 2
      while offset < bytes.count, bytes[offset] != 0x0A, bytes[offset] != 0x0D { offset += 1 }
    case UInt8(ascii: "*"):
      offset += 2
      while offset < bytes.count {
        if bytes[offset] == UInt8(ascii: "*"), offset + 1 < bytes.count,
          bytes[offset + 1] == UInt8(ascii: "/")
        {
          offset += 2
          return true
        }
        offset += 1
      }
    default:
      return false
    }
    return true
  }

  /// Whether `byte` opens a string: `"`, or `'` where the dialect allows it.
  private func isQuote(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "\"") || (dialect.singleQuotes && byte == UInt8(ascii: "'"))
  }

  /// `true`, `false`, `null` or a number.
  private mutating func scalar() throws(JSONSyntaxError) -> JSONNode {
    let start = offset
    switch bytes[start] {
    case UInt8(ascii: "t"):
      try literal("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try literal("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try literal("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      break
    default:
      throw fail("Invalid value: expected a value, found \(shown(start))")
    }
    if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
    guard offset < bytes.count else { throw fail("Unexpected end of file (in a number)") }
    guard isDigit(bytes[offset]) else {
      throw fail("Invalid number: expected a digit after \"-\", found \(shown(offset))")
    }
    if bytes[offset] == UInt8(ascii: "0"), offset + 1 < bytes.count, isDigit(bytes[offset + 1]) {
      throw fail("Invalid number: a leading zero")
    }
    try digits()
    if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
      offset += 1
      try digits(after: "\".\"")
    }
    if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
      offset += 1
      if offset < bytes.count,
        bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-")
      {
        offset += 1
      }
      try digits(after: "the exponent's \"e\"")
    }
    try expectEndOfToken()
    return .number(String(decoding: bytes[start..<offset], as: UTF8.self))
  }

  /// Reads `word` (`true`, `false` or `null`), which must start here.
  private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
    let count = word.utf8CodeUnitCount
    let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
    for index in 0..<count {
      guard offset + index < bytes.count else {
        throw JSONSyntaxError(offset: bytes.count, reason: "Unexpected end of file (in \(word))")
      }
      guard bytes[offset + index] == expected[index] else {
        throw JSONSyntaxError(
          offset: offset + index,
          reason: "Invalid value: expected \(word), found \(shown(offset + index))")
      }
    }
    offset += count
    try expectEndOfToken()
  }

  private mutating func digits(after what: String? = nil) throws(JSONSyntaxError) {
    let start = offset
    while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
    if offset == start, let what {
      guard offset < bytes.count else { throw fail("Unexpected end of file (in a number)") }
      throw fail("Invalid number: expected a digit after \(what), found \(shown(offset))")
    }
  }

  /// A literal or number must be followed by white space or punctuation: `truex` and `12a` are
  /// errors.
  private func expectEndOfToken() throws(JSONSyntaxError) {
    guard offset < bytes.count else { return }
    switch bytes[offset] {
    case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"),
      UInt8(ascii: ":"):
      return
    case UInt8(ascii: "/") where dialect.comments:
      return
    default:
      throw fail("Invalid value: unexpected \(shown(offset))")
    }
  }

  private func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  /// The string that starts here: its text, or why it is not text.
  private mutating func string() throws(JSONSyntaxError) -> JSONNode {
    let quote = bytes[offset]
    offset += 1
    // The common case: no escapes, all ASCII; the bytes are the text.
    var index = offset
    while index < bytes.count {
      let byte = bytes[index]
      if byte == quote || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 {
        break
      }
      index += 1
    }
    if index < bytes.count, bytes[index] == quote {
      let text = String(decoding: bytes[offset..<index], as: UTF8.self)
      offset = index + 1
      return .string(text)
    }
    scratch.removeAll(keepingCapacity: true)
    scratch.append(contentsOf: bytes[offset..<index])
    offset = index
    var problem: JSONFlaw?
    while true {
      guard offset < bytes.count else {
        throw JSONSyntaxError(offset: bytes.count, reason: "Unexpected end of file (in a string)")
      }
      let byte = bytes[offset]
      switch byte {
      case quote:
        offset += 1
        if let problem { return .unreadable(problem) }
        return .string(String(decoding: scratch, as: UTF8.self))
      case UInt8(ascii: "\\"):
        if let trouble = try escape(), problem == nil { problem = trouble }
      case ..<0x20:
        throw fail(
          "Unescaped control character U+\(hex(byte, width: 4)) in a string (write it as \\u"
            + "\(hex(byte, width: 4)))")
      case ..<0x80:
        scratch.append(byte)
        offset += 1
      default:
        let length = Self.validSequenceLength(bytes, at: offset)
        if length == 0 {
          if problem == nil {
            problem = JSONFlaw(
              reason: "Invalid UTF-8 sequence (byte 0x\(hex(byte, width: 2))) in a string",
              offset: offset)
          }
          offset += 1
        } else {
          scratch.append(contentsOf: bytes[offset..<offset + length])
          offset += length
        }
      }
    }
  }

  /// Reads the escape at `offset` into `scratch`; returns why it is not text (a lone surrogate),
  /// or throws when it is not an escape at all.
  private mutating func escape() throws(JSONSyntaxError) -> JSONFlaw? {
    let start = offset
    guard offset + 1 < bytes.count else {
      throw JSONSyntaxError(offset: bytes.count, reason: "Unexpected end of file (in a string)")
    }
    let letter = bytes[offset + 1]
    offset += 2
    switch letter {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(letter)
    case UInt8(ascii: "'") where dialect.singleQuotes: scratch.append(letter)
    case UInt8(ascii: "b"): scratch.append(0x08)
    case UInt8(ascii: "f"): scratch.append(0x0C)
    case UInt8(ascii: "n"): scratch.append(0x0A)
    case UInt8(ascii: "r"): scratch.append(0x0D)
    case UInt8(ascii: "t"): scratch.append(0x09)
    case UInt8(ascii: "u"):
      let unit = try hexUnit(at: start)
      var scalar: Unicode.Scalar?
      if (0xD800...0xDBFF).contains(unit) {
        if offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
          bytes[offset + 1] == UInt8(ascii: "u")
        {
          let lowStart = offset
          offset += 2
          let low = try hexUnit(at: lowStart)
          if (0xDC00...0xDFFF).contains(low) {
            scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
          } else {
            offset = lowStart  // read the second escape on its own
          }
        }
      } else if !(0xDC00...0xDFFF).contains(unit) {
        scalar = Unicode.Scalar(unit)
      }
      guard let scalar else {
        let code = hex(UInt8(unit >> 8), width: 2) + hex(UInt8(unit & 0xFF), width: 2)
        return JSONFlaw(
          reason: "A lone surrogate \\u\(code) in a string (expected a "
            + "\(unit < 0xDC00 ? "low" : "high")-surrogate code point beside it)",
          offset: start)
      }
      scratch.append(contentsOf: String(Character(scalar)).utf8)
    default:
      offset = start
      throw fail("Invalid escape sequence \\\(shown(start + 1)) in a string")
    }
    return nil
  }

  /// The four hex digits after `\u`, which starts at `start`.
  private mutating func hexUnit(at start: Int) throws(JSONSyntaxError) -> UInt32 {
    guard offset + 4 <= bytes.count else {
      throw JSONSyntaxError(offset: bytes.count, reason: "Unexpected end of file (in a string)")
    }
    var unit: UInt32 = 0
    for byte in bytes[offset..<offset + 4] {
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default:
        throw JSONSyntaxError(
          offset: start, reason: "Invalid escape sequence: \\u needs four hex digits")
      }
      unit = unit << 4 | UInt32(digit)
    }
    offset += 4
    return unit
  }

  /// Moves past the string that starts here, checking its escapes and control characters.
  private mutating func skipString() throws(JSONSyntaxError) {
    let quote = bytes[offset]
    offset += 1
    while offset < bytes.count {
      let byte = bytes[offset]
      if byte == quote {
        offset += 1
        return
      }
      if byte == UInt8(ascii: "\\") {
        let saved = scratch.count
        _ = try escape()
        scratch.removeSubrange(saved...)
        continue
      }
      if byte < 0x20 {
        throw fail(
          "Unescaped control character U+\(hex(byte, width: 4)) in a string (write it as \\u"
            + "\(hex(byte, width: 4)))")
      }
      offset += 1
    }
    throw JSONSyntaxError(offset: bytes.count, reason: "Unexpected end of file (in a string)")
  }

  /// The length of the valid UTF-8 sequence that starts at `index` with a byte of 0x80 or more,
  /// or 0 when it is not valid (an overlong form, a surrogate, beyond U+10FFFF, cut short).
  static func validSequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
    let first = bytes[index]
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch first {
    case 0xC2...0xDF: length = 2
    case 0xE0:
      length = 3
      low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED:
      length = 3
      high = 0x9F
    case 0xF0:
      length = 4
      low = 0x90
    case 0xF1...0xF3: length = 4
    case 0xF4:
      length = 4
      high = 0x8F
    default: return 0
    }
    guard index + length <= bytes.count else { return 0 }
    let second = bytes[index + 1]
    guard second >= low && second <= high else { return 0 }
    for next in bytes[(index + 2)..<(index + length)] where next & 0xC0 != 0x80 { return 0 }
    return length
  }

  private func fail(_ reason: String) -> JSONSyntaxError {
    JSONSyntaxError(offset: offset, reason: reason)
  }

  /// The byte at `index` for messages: `"x"`, or `byte 0xFF`, or `the end of the file`.
  private func shown(_ index: Int) -> String {
    guard index < bytes.count else { return "the end of the file" }
    let byte = bytes[index]
    if byte >= 0x21 && byte < 0x7F { return "\"\(Character(Unicode.Scalar(byte)))\"" }
    return "byte 0x\(hex(byte, width: 2))"
  }

  private func hex(_ byte: UInt8, width: Int) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}
