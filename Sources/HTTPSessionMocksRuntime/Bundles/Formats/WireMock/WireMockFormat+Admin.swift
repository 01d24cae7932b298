import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The bodies of WireMock's admin API that are more than one mapping or one request pattern,
// read like the mappings themselves: every value is checked where it is, and what is wrong is a
// `MockBundleError` with its path (`mappings[3].request.urll`), which the admin API answers as
// `422` with that path as a JSON pointer. Nothing here traps on any input.

/// The body of `POST /__admin/mappings/import`: `{"mappings": [...], "importOptions":
/// {"duplicatePolicy": "OVERWRITE" | "IGNORE", "deleteAllNotInImport": false}}`, every mapping
/// read before any is added.
package struct WireMockImport: Sendable {
  /// The mappings, in the body's order.
  package var mappings: [WireMockMapping]
  /// `duplicatePolicy: IGNORE`: a mapping whose id is taken is skipped instead of replacing it.
  package var ignoresDuplicates: Bool
  /// `deleteAllNotInImport: true`: the mappings whose ids the import lacks are removed.
  package var deletesOthers: Bool

  /// Reads the body; errors name the path of the bad value (`mappings[0]`), from the body's
  /// root. Members WireMock does not read beside `mappings` are ignored, as WireMock ignores
  /// them.
  ///
  /// The body is read one mapping at a time, each parsed, read and let go before the next,
  /// so that a 30 MiB import never stands as one parsed tree beside the mappings it makes.
  /// What is reported is what reading it whole would report: a syntax error anywhere first,
  /// then the first bad mapping, then a bad `importOptions`.
  package init(json data: Data, source: String) throws(MockBundleError) {
    try WireMockFormat.requireContent(data, source: source)
    // As WireMock reads admin bodies: comments, no trailing comma.
    self = try JSONText.read(data, source: source, duplicates: .lastWins, dialect: .wireMock) {
      parser, text in try Self.read(&parser, text: text)
    }
  }

  private init(mappings: [WireMockMapping], ignoresDuplicates: Bool, deletesOthers: Bool) {
    self.mappings = mappings
    self.ignoresDuplicates = ignoresDuplicates
    self.deletesOthers = deletesOthers
  }

  /// Reads the document from `parser`: a syntax error is thrown as soon as it is met (as a
  /// ``JSONSyntaxError``), a problem with a value only once the whole document is known to
  /// parse.
  private static func read(_ parser: inout JSONParser, text: JSONText) throws -> Self {
    guard try parser.peek() == UInt8(ascii: "{") else {
      throw JSONCursor(try parser.document(), text: text).expected("an object")
    }
    let files = BundleFiles(folder: nil, source: text.source)
    /// The last `mappings` member's mappings, or the first problem with them.
    var read: Result<[WireMockMapping], MockBundleError>?
    var optionsNode: JSONNode?
    try parser.beginObject()
    while let key = try parser.nextMember() {
      switch key {
      case "mappings":
        guard try parser.peek() == UInt8(ascii: "[") else {
          let node = try parser.value()
          read = .failure(JSONCursor(node, path: "mappings", text: text).expected("an array"))
          continue
        }
        var mappings: [WireMockMapping] = []
        var problem: MockBundleError?
        var index = 0
        try parser.beginArray()
        while try parser.nextElement() {
          guard problem == nil else {
            try parser.skipValue()
            continue
          }
          let element = JSONCursor(try parser.value(), path: "mappings[\(index)]", text: text)
          do {
            mappings.append(
              try WireMockFormat.mapping(
                element, origin: "\(text.source) mapping \(index + 1)", files: files))
          } catch {
            problem = error
            mappings = []
          }
          index += 1
        }
        read = problem.map { .failure($0) } ?? .success(mappings)
      case "importOptions":
        optionsNode = try parser.value()
      default:
        try parser.skipValue()
      }
    }
    try parser.end()
    guard let read else {
      throw JSONCursor(.object([]), text: text).fail(
        "expected a member \"mappings\" (the mappings to import)")
    }
    var result = Self(mappings: try read.get(), ignoresDuplicates: false, deletesOthers: false)
    guard let node = optionsNode else { return result }
    let options = JSONCursor(node, path: "importOptions", text: text)
    guard !options.isNull else { return result }
    try options.rejectUnknownMembers(["duplicatePolicy", "deleteAllNotInImport"])
    if let policy = try options.optional("duplicatePolicy"), !policy.isNull {
      switch try policy.string() {
      case "OVERWRITE": break
      case "IGNORE": result.ignoresDuplicates = true
      default: throw policy.expected("OVERWRITE or IGNORE")
      }
    }
    if let delete = try options.optional("deleteAllNotInImport"), !delete.isNull {
      result.deletesOthers = try delete.bool()
    }
    return result
  }
}

/// The body of `POST /__admin/requests/wait`, the admin API's own endpoint beyond WireMock:
/// `{"pattern": {...}, "count": N, "timeoutMs": T}`, each member optional.
package struct WireMockWait: Sendable {
  /// The requests to count: the pattern, or any request when it is absent or `null`.
  package var pattern: RequestMatcher
  /// How many must arrive: 1 when absent.
  package var count: Int
  /// How long to wait for them, in milliseconds: 10,000 when absent.
  package var timeoutMilliseconds: Int

  /// The longest wait a body may ask for: 24 hours.
  package static let maximumTimeoutMilliseconds = 86_400_000

  /// Reads the body; errors name the path of the bad value (`pattern.urll`, `count`).
  package init(json data: Data, source: String) throws(MockBundleError) {
    let root = try WireMockFormat.adminBody(data, source: source)
    try root.rejectUnknownMembers(["pattern", "count", "timeoutMs"])
    if let given = try root.optional("pattern"), !given.isNull {
      pattern = try WireMockFormat.request(given)
    } else {
      pattern = .any
    }
    count = 1
    if let given = try root.optional("count"), !given.isNull {
      count = try given.integer()
      guard count >= 0 else { throw given.expected("a count of requests, 0 or more") }
    }
    timeoutMilliseconds = 10_000
    if let given = try root.optional("timeoutMs"), !given.isNull {
      timeoutMilliseconds = try given.integer()
      guard (0...Self.maximumTimeoutMilliseconds).contains(timeoutMilliseconds) else {
        throw given.expected(
          "a number of milliseconds from 0 to \(Self.maximumTimeoutMilliseconds) (24 hours)")
      }
    }
  }
}

/// The body of `POST /__admin/near-misses/request`: a request as WireMock logs one (`url`,
/// `method`, `headers`, `body` or `bodyAsBase64`); other members of a logged request
/// (`absoluteUrl`, `loggedDate`, ...) are ignored, as WireMock ignores what it does not need.
package struct WireMockLoggedRequest: Sendable {
  /// The path and query, starting with `/`.
  package var url: String
  /// The method: `GET` when absent.
  package var method: String
  /// The headers in the body's order, each with its values (`"Accept": "a"` or
  /// `"Accept": ["a", "b"]`).
  package var headers: [(name: String, values: [String])]
  /// The body: `bodyAsBase64` decoded, else `body` as UTF-8, else `nil`.
  package var body: Data?

  /// Reads the body; errors name the path of the bad value (`url`, `headers.Accept`).
  package init(json data: Data, source: String) throws(MockBundleError) {
    let root = try WireMockFormat.adminBody(data, source: source)
    let url = try root.required("url", "the request's path and query, such as /orders?page=2")
    self.url = try url.string()
    guard self.url.hasPrefix("/") else { throw url.expected("a path that starts with /") }
    method = "GET"
    if let given = try root.optional("method"), !given.isNull {
      method = try given.string()
      guard !method.isEmpty else { throw given.expected("an HTTP method") }
    }
    headers = []
    if let given = try root.optional("headers"), !given.isNull {
      for member in try given.members() {
        let value = given.member(member.key, member.value)
        if case .array = value.node {
          var values: [String] = []
          for element in try value.elements() { values.append(try element.string()) }
          headers.append((member.key, values))
        } else {
          headers.append((member.key, [try value.string()]))
        }
      }
    }
    body = nil
    if let given = try root.optional("bodyAsBase64"), !given.isNull {
      guard let data = Data(base64Encoded: try given.string()) else {
        throw given.expected("base64 text")
      }
      body = data
    } else if let given = try root.optional("body"), !given.isNull {
      body = Data(try given.string().utf8)
    }
  }
}

/// The body of `POST /__admin/mappings/remove-by-metadata`: a WireMock value pattern
/// (`{"matchesJsonPath": "$.tags"}`) that each mapping's `metadata` is tested against.
package struct WireMockMetadataPattern: Sendable {
  private let test: ValuePattern

  /// Reads the pattern; errors name the path of the bad value. Read once, before any mapping is
  /// tested, so that a pattern that cannot be read fails even when there are no mappings.
  package init(json data: Data, source: String) throws(MockBundleError) {
    test = try WireMockFormat.pattern(try WireMockFormat.adminBody(data, source: source))
  }

  /// Whether `mapping`'s metadata matches; a mapping without metadata matches nothing but
  /// `absent`.
  package func matches(_ mapping: WireMockMapping) -> Bool {
    test.test(mapping.metadataJSON.map { String(decoding: $0, as: UTF8.self) })
  }
}

extension WireMockMapping {
  /// The new state in the body of `PUT /__admin/scenarios/{name}/state`: `{"state": "..."}`.
  package static func scenarioState(json data: Data, source: String) throws(MockBundleError)
    -> String
  {
    let root = try WireMockFormat.adminBody(data, source: source)
    return try root.required("state", "the scenario's new state").string()
  }

  /// The id a path segment names (`/__admin/mappings/{id}`), or `nil` unless the segment is
  /// exactly a UUID as the server writes them: 36 characters, hexadecimal digits in groups of
  /// 8-4-4-4-12, in either case. No trailing bytes, NUL or other, are skipped.
  package static func id(exactly text: String) -> UUID? {
    WireMockFormat.exactUUID(text)
  }
}

extension MockBundleError {
  /// ``path`` as an RFC 6901 JSON pointer, as WireMock's admin API names the field at fault:
  /// `mappings[0].request.urll` is `/mappings/0/request/urll`, `headers["a/b"]` is
  /// `/headers/a~1b`. A problem with the whole document is `/`; a syntax error, which has a
  /// line and a column instead of a path, has none (WireMock names none either).
  package var jsonPointer: String? {
    if path.isEmpty { return line == nil ? "/" : nil }
    // The path's steps: plain names (`request`, `X-A`: letters, digits, `_` and `-`, after a
    // `.` but the first), indexes (`[3]`) and JSON-quoted keys (`["a.b"]`).
    var steps: [String] = []
    var rest = Substring(path)
    while !rest.isEmpty {
      if rest.utf8.first == UInt8(ascii: ".") {
        rest = rest[rest.utf8.index(after: rest.startIndex)...]
      }
      if rest.utf8.first == UInt8(ascii: "[") {
        guard let close = Self.closingBracket(in: rest) else {
          steps.append(String(rest))
          break
        }
        let inside = rest[rest.utf8.index(after: rest.startIndex)..<close]
        steps.append(Self.unquoted(inside) ?? String(inside))
        rest = rest[rest.utf8.index(after: close)...]
      } else {
        let end =
          rest.utf8.firstIndex { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "[") }
          ?? rest.endIndex
        steps.append(String(rest[..<end]))
        rest = rest[end...]
      }
    }
    return steps.map {
      "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }.joined()
  }

  /// The `]` that closes the `[` that `text` starts with: the next one, or the one after a
  /// JSON-quoted key (whose text may hold `]`).
  private static func closingBracket(in text: Substring) -> Substring.Index? {
    // Bytes, not characters: a combining mark after a quote must not hide the quote.
    let bytes = text.utf8
    var index = bytes.index(after: bytes.startIndex)
    guard index < bytes.endIndex else { return nil }
    guard bytes[index] == UInt8(ascii: "\"") else {
      return bytes[index...].firstIndex(of: UInt8(ascii: "]"))
    }
    index = bytes.index(after: index)
    var escaped = false
    while index < bytes.endIndex {
      let byte = bytes[index]
      if escaped {
        escaped = false
      } else if byte == UInt8(ascii: "\\") {
        escaped = true
      } else if byte == UInt8(ascii: "\"") {
        let next = bytes.index(after: index)
        return next < bytes.endIndex && bytes[next] == UInt8(ascii: "]") ? next : nil
      }
      index = bytes.index(after: index)
    }
    return nil
  }

  /// The text of a JSON-quoted key (`"a.b"`), or `nil` when `text` is not one.
  private static func unquoted(_ text: Substring) -> String? {
    guard text.hasPrefix("\"") else { return nil }
    let cursor = try? JSONCursor.parse(Data(text.utf8), source: "", duplicates: .lastWins)
    return try? cursor?.string()
  }
}

extension WireMockFormat {
  /// An admin request's body as a document: an empty body is a problem with the whole body
  /// (WireMock's "No content to map"), not a syntax error.
  static func adminBody(_ data: Data, source: String) throws(MockBundleError) -> JSONCursor {
    try requireContent(data, source: source)
    return try JSONCursor.parse(data, source: source, duplicates: .lastWins, dialect: .wireMock)
  }

  /// Throws WireMock's "No content to map" for a body of nothing but white space.
  static func requireContent(_ data: Data, source: String) throws(MockBundleError) {
    if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
      throw MockBundleError(.malformed, source: source, "the body is empty; expected a JSON object")
    }
  }

  /// `text` as a UUID when it is exactly one (see ``WireMockMapping/id(exactly:)``).
  static func exactUUID(_ text: String) -> UUID? {
    var count = 0
    for (offset, byte) in text.utf8.enumerated() {
      count += 1
      guard count <= 36 else { return nil }
      if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
        guard byte == UInt8(ascii: "-") else { return nil }
      } else {
        let isHex =
          (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte)
          || (0x61...0x66).contains(byte)
        guard isHex else { return nil }
      }
    }
    return count == 36 ? UUID(uuidString: text) : nil
  }
}

extension JSONValue {
  /// An admin request's body as a value, read as WireMock reads admin bodies (comments and
  /// single quotes, no trailing comma); throws a ``MockBundleError`` naming the place.
  package init(wireMockAdminBody data: Data) throws {
    self = try WireMockFormat.adminBody(data, source: "the request body").json()
  }
}
