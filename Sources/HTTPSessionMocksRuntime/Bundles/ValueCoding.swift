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

/// What a response's head says in both formats that carry one (ours and WireMock's): the
/// headers, where a value is a string or, for a header sent several times (`Set-Cookie`), an
/// array of strings, and the status line's text.
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
        if case .array = value.node {
          var values: [String] = []
          for element in try value.elements() { values.append(try element.string()) }
          multiValued.append((member.key, values))
        } else {
          fields[member.key] = try value.string()
        }
      }
    }
    if let given = try cursor.optional(phraseKey), !given.isNull {
      let phrase = try given.string()
      if let problem = StubResponse.reasonPhraseProblem(phrase) { throw given.fail(problem) }
      reasonPhrase = phrase
    }
  }

  /// `response` with the multi-valued headers and the reason phrase added.
  func applied(to response: StubResponse) -> StubResponse {
    var response = response
    for (name, values) in multiValued { response = response.header(name, values: values) }
    if let reasonPhrase { response = response.reasonPhrase(reasonPhrase) }
    return response
  }
}
