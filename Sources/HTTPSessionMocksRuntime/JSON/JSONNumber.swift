/// JSON numbers, read and written in one place: the value a literal stands for (as every body,
/// file and admin document is read), and the plain form in which WireMock writes one.
enum JSONNumber {
  /// The value of number literal `literal` (as ``JSONParser`` accepts it), or `nil` when it is
  /// beyond a `Double` (`1e400`).
  ///
  /// A whole number is an ``JSONValue/integer(_:)`` however it is written (`100`, `1e2`,
  /// `100.0`, `-0.0`) while it fits an `Int64`, and anything else a ``JSONValue/double(_:)``:
  /// the values `JSONDecoder` gave when it read request bodies, so that matching, JSONPath and
  /// templates see the numbers they saw before. One difference is left, beyond a `Double`'s
  /// precision: a literal with more than 15 significant digits whose fraction the `Double`
  /// loses (`9007199254740993.5`) is the `Double`'s whole number (9007199254740994), where
  /// `JSONDecoder` truncated the digits (9007199254740993).
  static func value(_ literal: String) -> JSONValue? {
    if let integer = Int64(literal) { return .integer(integer) }
    guard let number = Double(literal), number.isFinite else { return nil }
    // 2^63: the first Double beyond Int64.
    guard number == number.rounded(), abs(number) < 9_223_372_036_854_775_808 else {
      return .double(number)
    }
    // Exact when the digits are a whole number (`9007199254740993.0`, beyond a Double's
    // precision), else the Double's value (`1.00000000000000000001` is 1).
    if let exact = Int64(plain(literal)) { return .integer(exact) }
    return Int64(exactly: number).map { .integer($0) } ?? .double(number)
  }

  /// The text of `number` in a document this package writes: Swift's shortest form that reads
  /// back as the same `Double` (`0.1`, `1e-07`), and `null` for an infinity or NaN, which
  /// parsed JSON never holds.
  static func text(_ number: Double) -> String {
    number.isFinite ? String(number) : "null"
  }

  /// A JSON number literal as WireMock 2.35.1 writes a `jsonBody` number (Jackson reads it
  /// as a `BigDecimal` and writes it plain, without trailing zeros): `1.0` is `1`, `1e2` is
  /// `100`, `-0.0` is `0`, `1E-7` is `0.0000001`, `1.23e20` is `123000000000000000000`; every
  /// digit is kept. An exponent beyond ±10,000 (which no `Double` reaches) is left as written.
  static func plain(_ literal: String) -> String {
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
}
