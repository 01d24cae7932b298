import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// How bundle files write the values that stubs hold: bodies, error codes, durations.

/// Bodies that read as text are written as text; others as base64 or a file.
enum BodyCoding {
  /// `data` as a string when it is UTF-8 without control characters other than tab, CR and LF.
  static func text(of data: Data) -> String? {
    guard let text = String(data: data, encoding: .utf8) else { return nil }
    let printable = text.unicodeScalars.allSatisfy {
      $0.value >= 0x20 && $0.value != 0x7F || $0 == "\n" || $0 == "\r" || $0 == "\t"
    }
    return printable ? text : nil
  }
}

/// `URLError` codes as names (`"timedOut"`) where the library knows one, else numbers.
enum ErrorCoding {
  static func encode(_ code: URLError.Code) -> JSONValue {
    ErrorText.names[code].map { .string($0) } ?? .integer(Int64(code.rawValue))
  }

  static func decode(_ cursor: JSONCursor) throws(MockBundleError) -> URLError.Code {
    if case .string(let name) = cursor.node {
      guard let code = ErrorText.names.first(where: { $0.value == name })?.key else {
        throw cursor.fail(
          "expected a URLError code (a number such as -1001, or one of "
            + ErrorText.names.values.sorted().joined(separator: ", ") + "), got \(cursor.found)")
      }
      return code
    }
    // `URLError.Code(rawValue:)` is failable on some platforms and not on others.
    let code: URLError.Code? = URLError.Code(rawValue: try cursor.integer())
    guard let code else { throw cursor.expected("a URLError code") }
    return code
  }
}

/// Durations as exact decimal seconds: `"3s"`, `"0.25s"`, `"-1.5s"`.
enum DurationCoding {
  static func encode(_ duration: Duration) -> String {
    if duration < .zero { return "-" + encode(.zero - duration) }
    let (seconds, attoseconds) = duration.components
    guard attoseconds != 0 else { return "\(seconds)s" }
    var fraction = String(attoseconds)
    fraction = String(repeating: "0", count: max(0, 18 - fraction.count)) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(seconds).\(fraction)s"
  }

  static func decode(_ cursor: JSONCursor) throws(MockBundleError) -> Duration {
    let text = try cursor.string()
    var rest = Substring(text)
    let negative = rest.hasPrefix("-")
    if negative { rest = rest.dropFirst() }
    guard rest.hasSuffix("s") else {
      throw cursor.expected("a duration in seconds such as \"2.5s\"")
    }
    rest = rest.dropLast()
    let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let digits: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    guard digits(parts[0]), parts.count == 1 || (digits(parts[1]) && parts[1].count <= 18),
      let seconds = Int64(parts[0])
    else {
      throw cursor.expected("a duration in seconds such as \"2.5s\" (at most 18 decimals)")
    }
    var attoseconds: Int64 = 0
    if parts.count == 2 {
      let padded = parts[1] + String(repeating: "0", count: 18 - parts[1].count)
      attoseconds = Int64(padded) ?? 0
    }
    let duration = Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
    return negative ? .zero - duration : duration
  }
}

/// The header fields that a stub makes the package send (a response's headers, the request
/// headers a proxy adds), checked where a file gives them: a name that is not a token, or a value
/// holding CR, LF or NUL, would end its line and start another header of the file's choosing, or
/// another message (request smuggling), so it is refused at load, naming the field.
enum HeaderFieldText {
  /// Why `name` cannot be a header name (RFC 9110's `token`: one or more letters, digits and
  /// the 15 marks `tchar` allows), or `nil` when it can.
  static func nameProblem(_ name: String) -> String? {
    var quoted = ""
    JSONWriter.quote(name, into: &quoted)
    guard let bad = name.unicodeScalars.first(where: { !isTokenCharacter($0) }) else {
      return name.isEmpty ? "\(quoted) is not a header name: a name has one character or more" : nil
    }
    return "\(quoted) is not a header name: a name holds only letters, digits and "
      + "!#$%&'*+-.^_`|~ (RFC 9110), and this one holds \(describe(bad))"
      + (isLineBreak(bad) ? ", which would end the header's line and start another" : "")
  }

  /// Why `value` cannot be the value of the header `name` (it holds CR, LF or NUL), or `nil`
  /// when it can.
  static func valueProblem(_ value: String, name: String) -> String? {
    guard let bad = value.unicodeScalars.first(where: isLineBreak) else { return nil }
    return "the value of the header \(name) holds \(describe(bad)), which would end the header's "
      + "line and start another header or request; a header value may not hold CR, LF or NUL"
  }

  private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\r" || scalar == "\n" || scalar == "\0"
  }

  private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "0"..."9", "A"..."Z", "a"..."z": return true
    default: return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
    }
  }

  private static func describe(_ scalar: Unicode.Scalar) -> String {
    let code = String(scalar.value, radix: 16, uppercase: true)
    let number = "U+" + String(repeating: "0", count: max(0, 4 - code.count)) + code
    switch scalar {
    case "\r": return "a carriage return (\(number))"
    case "\n": return "a line feed (\(number))"
    case "\0": return "NUL (\(number))"
    case " ": return "a space (\(number))"
    default: return "\(String(scalar).debugDescription) (\(number))"
    }
  }
}

/// What a response's head says in both formats that carry one (ours and WireMock's): the
/// headers, where a value is a string or, for a header sent several times (`Set-Cookie`), an
/// array of strings, and the status line's text. Every header is checked by
/// ``HeaderFieldText``.
struct HeadCoding {
  /// Headers with one value.
  var fields: [String: String] = [:]
  /// Headers with several values, in the file's order.
  var multiValued: [(String, [String])] = []
  /// The status line's text, when the file gives one.
  var reasonPhrase: String?

  /// Reads `cursor`'s `headers` member and its reason phrase, named `phraseKey` in the format.
  init(of cursor: JSONCursor, phraseKey: String) throws(MockBundleError) {
    if let given = try cursor.optional("headers") {
      for member in try given.members() {
        let value = given.member(member.key, member.value)
        if let problem = HeaderFieldText.nameProblem(member.key) { throw value.fail(problem) }
        if case .array = value.node {
          var values: [String] = []
          for element in try value.elements() {
            values.append(try Self.headerValue(element, name: member.key))
          }
          multiValued.append((member.key, values))
        } else {
          fields[member.key] = try Self.headerValue(value, name: member.key)
        }
      }
    }
    if let given = try cursor.optional(phraseKey), !given.isNull {
      let phrase = try given.string()
      if let problem = StubResponse.reasonPhraseProblem(phrase) { throw given.fail(problem) }
      reasonPhrase = phrase
    }
  }

  /// The string at `cursor`, the value of the header `name`, when it is one a header can carry.
  static func headerValue(_ cursor: JSONCursor, name: String) throws(MockBundleError) -> String {
    let text = try cursor.string()
    if let problem = HeaderFieldText.valueProblem(text, name: name) { throw cursor.fail(problem) }
    return text
  }

  /// `response` with the multi-valued headers and the reason phrase added.
  func applied(to response: StubResponse) -> StubResponse {
    var response = response
    for (name, values) in multiValued { response = response.header(name, values: values) }
    if let reasonPhrase { response = response.reasonPhrase(reasonPhrase) }
    return response
  }
}
