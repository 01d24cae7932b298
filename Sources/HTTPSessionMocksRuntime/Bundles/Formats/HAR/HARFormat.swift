import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// HAR 1.2 (the HTTP Archive format of browsers' and proxies' network panels), read as a
/// ``MockBundle`` and written from one.
///
/// **Reading.** Each entry becomes a stub for its method and exact URL (scheme, host, port, path
/// and the whole query, see ``ExactURL``), and for its body too when it has `postData` with a
/// `text`: a JSON body (one whose `mimeType` names JSON, or that is a JSON object or array)
/// matches as a JSON value, numbers by value and keys in any order, as `.jsonBody` does; any
/// other body byte for byte. It answers with the entry's status, its headers minus hop-by-hop
/// ones and `Content-Encoding`/`Content-Length` (the body in the file is already decoded), and
/// `content.text` as the body (base64-decoded when `content.encoding` says `base64`); with no
/// `Content-Type` header, `content.mimeType` becomes one. Entries with identical requests become
/// one stub whose responses play in recorded order, the last repeating; its label counts entries
/// from 1 (`session.har entry 3`). An entry with status 0 (a request the browser saw fail: Chrome
/// writes these) answers with `URLError(.networkConnectionLost)`.
///
/// What replay uses is checked; nothing else is read, so a field a HAR may omit or fill oddly
/// (`-1` sizes, missing `postData`, `cookies`, `timings` or `content`, an empty `text`,
/// `_`-prefixed fields, request headers, `"time": 1e999`) never fails a load. Text that is not
/// JSON throws a ``MockBundleError`` with its line and column and the reason; a malformed value
/// one with its path (`log.entries[12].response.status: expected a number, got "abc"`), as does
/// a misspelling that leaves a used field missing (`content.txet`). A key given twice counts
/// with its last value, as in JavaScript's `JSON.parse`.
///
/// **Writing.** Each response of each entry becomes one HAR entry, so a response sequence reads
/// back as the same sequence. Only an entry that names one request can be written: a matcher
/// made from a HAR entry, or an absolute pattern with a literal path (`.get("https://a.test/x")`,
/// written as that URL, which then replays exactly), each with at most an exact or JSON body (a
/// JSON body is written as compact JSON, `application/json`); answers must be HTTP responses.
/// Anything else (path-only or parameterised patterns, regexes, headers, closures, `URLError`
/// answers, `times`, scenario states) throws a ``MockBundleError`` that names the entry. Delays
/// are written as the entry's `time` and are not read back: replay is immediate.
enum HARFormat {
  // MARK: - The model

  struct Header: Sendable, Equatable {
    var name: String
    var value: String
  }

  struct Request: Sendable {
    var method: String
    var url: URL
    /// The URL taken apart, once, by the reader.
    var exact: ExactURL?
    var headers: [Header] = []
    /// The body from `postData.text`; `nil` when the entry has none (then any body matches).
    var body: Data?
    var mimeType: String?
  }

  struct Response: Sendable {
    var status: Int
    var statusText = ""
    var headers: [Header] = []
    var body = Data()
    var mimeType = ""
    /// Why a status-0 entry failed (Chrome's `_error`).
    var error: String?
  }

  struct Entry: Sendable {
    var request: Request
    var response: Response
    var startedDateTime = "1970-01-01T00:00:00.000Z"
    /// Milliseconds.
    var time: Double = 0
  }

  /// Response headers that describe the connection or the encoding on the wire, not the body
  /// that a replay delivers; never replayed.
  static let droppedResponseHeaders: Set<String> = [
    "connection", "keep-alive", "proxy-authenticate", "proxy-connection", "te", "trailer",
    "transfer-encoding", "upgrade", "content-encoding", "content-length",
  ]

  // MARK: - Reading

  /// A read HAR document: its entries, and where more can be appended to it.
  struct Document {
    var entries: [Entry]
    /// The document as UTF-8 (the file's bytes, unless the file is UTF-16 or UTF-32).
    var utf8: Data
    /// The byte offset in ``utf8`` of the `]` that closes `log.entries`.
    var entriesEnd: Int
  }

  /// The bundle a HAR document replays; `source` names the file in errors, `name` in reports
  /// (`session.har entry 3 (GET https://...)`).
  static func read(_ data: consuming Data, source: String, name: String) throws(MockBundleError)
    -> MockBundle
  {
    let entries = try document(data, source: source).entries
    data = Data()  // the file's bytes go before the stubs are built
    return bundle(from: consume entries, name: name)
  }

  /// The entries of a HAR document, checked.
  ///
  /// The document is parsed one entry at a time: each entry's value is parsed, read into an
  /// ``Entry`` and let go before the next, and what lies outside `log.entries` is only checked
  /// for JSON syntax, so a large recording never exists twice in memory as a tree. A key given
  /// twice in an object counts once, with its last value (``DuplicateKeys/lastWins``).
  static func document(_ data: Data, source: String) throws(MockBundleError) -> Document {
    try JSONText.read(data, source: source, duplicates: .lastWins) { parser, text in
      try document(&parser, text: text)
    }
  }

  private static func document(_ parser: inout JSONParser, text: JSONText) throws -> Document {
    let reader = Reader()
    guard try parser.peek() == UInt8(ascii: "{") else {
      throw JSONCursor(try parser.document(), text: text).expected(
        "an object (a HAR document: {\"log\": {\"entries\": [...]}})")
    }
    var found: Document?
    var rootKeys: [String] = []
    try parser.beginObject()
    while let key = try parser.nextMember() {
      rootKeys.append(key)
      guard key == "log" else {
        try parser.skipValue()
        continue
      }
      found = nil  // a later "log" replaces an earlier one
      guard try parser.peek() == UInt8(ascii: "{") else {
        throw JSONCursor(try parser.value(), path: "log", text: text).expected("an object")
      }
      var logKeys: [String] = []
      var document: Document?
      try parser.beginObject()
      while let key = try parser.nextMember() {
        logKeys.append(key)
        guard key == "entries" else {
          try parser.skipValue()
          continue
        }
        guard try parser.peek() == UInt8(ascii: "[") else {
          throw JSONCursor(try parser.value(), path: "log.entries", text: text).expected(
            "an array")
        }
        var entries: [Entry] = []
        try parser.beginArray()
        while try parser.nextElement() {
          let path = "log.entries[\(entries.count)]"
          entries.append(try reader.entry(JSONCursor(try parser.value(), path: path, text: text)))
        }
        document = Document(entries: entries, utf8: text.data, entriesEnd: parser.lastClose)
      }
      guard let document else {
        throw missing("entries", "the list of recorded exchanges", in: "log", keys: logKeys, text)
      }
      found = document
    }
    try parser.end()
    guard let found else {
      throw missing("log", "an object with the entries", in: "", keys: rootKeys, text)
    }
    return found
  }

  /// The error for a member `name` that the object at `path` lacks, naming a key that looks
  /// like a misspelling of it.
  private static func missing(
    _ name: String, _ what: String, in path: String, keys: [String], _ text: JSONText
  ) -> MockBundleError {
    var problem = "expected a member \"\(name)\" (\(what))"
    if let slip = keys.first(where: { !$0.hasPrefix("_") && JSONCursor.isSlip($0, of: name) }) {
      problem += "; \"\(slip)\" looks like a misspelling of it"
    }
    return MockBundleError(.malformed, source: text.source, path: path, problem)
  }

  /// The stubs that replay `entries`: one per distinct request, its responses in order.
  /// `name` names the file in the stubs' labels: `session.har entry 3`, counting from 1 as
  /// bundle entries do.
  static func bundle(from entries: [Entry], name: String) -> MockBundle {
    var groups: [RequestKey: Int] = [:]
    var built: [(matcher: RequestMatcher, responses: [StubResponse], numbers: [Int])] = []
    for (index, entry) in entries.enumerated() {
      guard let exact = entry.request.exact ?? ExactURL(entry.request.url) else {
        continue  // the reader has checked that every URL is absolute
      }
      let matcher = RequestMatcher.exact(
        entry.request.method, exact, body: entry.request.body, mimeType: entry.request.mimeType)
      let key = RequestKey(matcher)
      if let group = groups[key] {
        built[group].responses.append(stubResponse(entry))
        built[group].numbers.append(index + 1)
      } else {
        groups[key] = built.count
        built.append((matcher, [stubResponse(entry)], [index + 1]))
      }
    }
    let bundleEntries = built.map { group in
      MockBundle.Entry(
        matcher: group.matcher, responses: group.responses,
        origin: origin(name, numbers: group.numbers))
    }
    return MockBundle(entries: bundleEntries, firstMatchWins: false)
  }

  /// `session.har entry 3`, or `session.har entries 1, 4`.
  static func origin(_ name: String, numbers: [Int]) -> String {
    numbers.count == 1
      ? "\(name) entry \(numbers[0])"
      : "\(name) entries \(numbers.map(String.init).joined(separator: ", "))"
  }

  /// What makes two requests identical for replay: method, the URL as ``ExactURL`` compares
  /// it, and the body as the matcher compares it (bytes, or a JSON value).
  private struct RequestKey: Hashable {
    enum Body: Hashable {
      case none
      case bytes(Data)
      case json(JSONValue)
    }

    var request = ""
    var body = Body.none

    init(_ matcher: RequestMatcher) {
      guard case .all(let nodes) = matcher.node else {
        request = matcher.description
        return
      }
      for node in nodes {
        switch node {
        case .method(let method): request += method + " "
        case .exactURL(let exact):
          request += "\(exact.scheme)://\(exact.host):\(exact.port ?? -1)\(exact.path)?"
          request += exact.query.joined(separator: "&")
        case .body(let data): body = .bytes(data)
        case .jsonBody(let value): body = .json(value)
        default: continue
        }
      }
    }
  }

  /// The answer an entry replays.
  static func stubResponse(_ entry: Entry) -> StubResponse {
    let response = entry.response
    if response.status == 0 {
      let reason = "the recorded request failed" + (response.error.map { ": \($0)" } ?? "")
      return .error(
        URLError(
          .networkConnectionLost, for: URLRequest(url: entry.request.url), description: reason))
    }
    var headers: [String: String] = [:]
    var names: [String: String] = [:]
    for header in response.headers {
      let lower = header.name.lowercased()
      if droppedResponseHeaders.contains(lower) || header.name.hasPrefix(":") { continue }
      if let name = names[lower], let existing = headers[name] {
        headers[name] = existing + ", " + header.value
      } else {
        names[lower] = header.name
        headers[header.name] = header.value
      }
    }
    if names["content-type"] == nil, !response.mimeType.isEmpty, response.mimeType != "x-unknown" {
      headers["Content-Type"] = response.mimeType
    }
    return .data(response.body, status: response.status, headers: headers)
  }

  /// Reads entries from their parsed values, naming the path of whatever is wrong. What replay
  /// uses is checked; what it does not use (timings, cookies, request headers, sizes, custom
  /// `_` fields) is never read, so a value there that cannot be read (`"time": 1e999`) does no
  /// harm. A member that a HAR object lacks and replay uses is reported when the object holds
  /// a misspelling of it (`content.txet`).
  struct Reader {
    /// The members HAR 1.2 defines, by object (and `encoding` on `postData`, which some tools
    /// write).
    static let entryMembers: Set = [
      "pageref", "startedDateTime", "time", "request", "response", "cache", "timings",
      "serverIPAddress", "connection", "comment",
    ]
    static let requestMembers: Set = [
      "method", "url", "httpVersion", "cookies", "headers", "queryString", "postData",
      "headersSize", "bodySize", "comment",
    ]
    static let responseMembers: Set = [
      "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL",
      "headersSize", "bodySize", "comment",
    ]
    static let contentMembers: Set = [
      "size", "compression", "mimeType", "text", "encoding", "comment",
    ]
    static let postDataMembers: Set = ["mimeType", "params", "text", "encoding", "comment"]
    static let headerMembers: Set = ["name", "value", "comment"]

    func entry(_ cursor: JSONCursor) throws(MockBundleError) -> Entry {
      try cursor.rejectMisspellings(of: ["request", "response"], known: Self.entryMembers)
      let request = try self.request(try cursor.required("request", "the request as sent"))
      let response = try self.response(try cursor.required("response", "the answer"))
      var result = Entry(request: request, response: response)
      // Neither is replayed: kept when readable, for writing the entry back out.
      if let started = try? cursor.optional("startedDateTime")?.string() {
        result.startedDateTime = started
      }
      if let time = (try? cursor.optional("time"))??.finiteNumber { result.time = time }
      return result
    }

    func request(_ cursor: JSONCursor) throws(MockBundleError) -> Request {
      try cursor.rejectMisspellings(of: ["method", "url", "postData"], known: Self.requestMembers)
      let methodCursor = try cursor.required("method", "the HTTP method")
      let method = try methodCursor.string()
      guard !method.isEmpty, method.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
        throw methodCursor.expected("an HTTP method")
      }
      let urlCursor = try cursor.required("url", "the absolute URL")
      let urlText = try urlCursor.string()
      guard let url = URL(string: urlText), let exact = ExactURL(url) else {
        throw urlCursor.expected("an absolute URL with a scheme and a host")
      }
      var result = Request(method: method, url: url, exact: exact)
      if let post = try cursor.optional("postData"), !post.isNull {
        try post.rejectMisspellings(of: ["text", "mimeType"], known: Self.postDataMembers)
        result.mimeType = try post.optionalString("mimeType")
        if let text = try post.optionalString("text") {
          var encoding = try post.optionalString("encoding")
          if encoding == nil { encoding = try post.optionalString("_encoding") }
          result.body = try decode(text, encoding: encoding, in: post)
        }
      }
      return result
    }

    func response(_ cursor: JSONCursor) throws(MockBundleError) -> Response {
      try cursor.rejectMisspellings(
        of: ["status", "headers", "content"], known: Self.responseMembers)
      let statusCursor = try cursor.required("status", "the HTTP status")
      let status = try statusCursor.integer()
      guard status == 0 || (100...999).contains(status) else {
        throw statusCursor.expected("an HTTP status from 100 to 999 (or 0)")
      }
      var result = Response(status: status)
      if let text = try? cursor.optional("statusText")?.string() { result.statusText = text }
      if let headers = try cursor.optional("headers"), !headers.isNull {
        result.headers = try self.headers(headers)
      }
      if let error = try? cursor.optional("_error")?.string() { result.error = error }
      if let content = try cursor.optional("content"), !content.isNull {
        try content.rejectMisspellings(
          of: ["text", "mimeType", "encoding"], known: Self.contentMembers)
        result.mimeType = try content.optionalString("mimeType") ?? ""
        if let text = try content.optionalString("text") {
          result.body = try decode(
            text, encoding: try content.optionalString("encoding"), in: content)
        }
      }
      return result
    }

    func headers(_ cursor: JSONCursor) throws(MockBundleError) -> [Header] {
      let list = try cursor.elements()
      var headers: [Header] = []
      headers.reserveCapacity(list.count)
      for header in list {
        try header.rejectMisspellings(of: ["name", "value"], known: Self.headerMembers)
        headers.append(
          Header(
            name: try header.required("name", "the header's name").string(),
            value: try header.required("value", "the header's value").string()))
      }
      return headers
    }

    private func decode(_ text: String, encoding: String?, in cursor: JSONCursor)
      throws(MockBundleError) -> Data
    {
      switch encoding?.lowercased() {
      case nil, "", "utf-8", "utf8": return Data(text.utf8)
      case "base64":
        guard let data = Data(base64Encoded: text, options: [.ignoreUnknownCharacters]) else {
          throw try cursor.required("text", "").expected("base64 (the encoding says so)")
        }
        return data
      default:
        let name = try cursor.has("encoding") ? "encoding" : "_encoding"
        throw try cursor.required(name, "").expected("\"base64\" or nothing")
      }
    }
  }

  // MARK: - Writing

  /// A HAR 1.2 document of `bundle`'s entries; throws a ``MockBundleError`` naming the first entry
  /// that HAR cannot express.
  static func write(_ bundle: MockBundle) throws -> Data {
    try encode(entries(of: bundle))
  }

  /// The HAR entries that replay `bundle`.
  static func entries(of bundle: MockBundle) throws -> [Entry] {
    var entries: [Entry] = []
    for (index, item) in bundle.entries.enumerated() {
      let place = "entries[\(index)] (\(item.origin))"
      func refuse(_ reason: String) -> MockBundleError {
        MockBundleError(
          .unstorable, source: "MockBundle", path: place, "cannot be written as HAR: \(reason)")
      }
      if item.times != nil { throw refuse("HAR has no call limit (times)") }
      if item.whenState != nil || item.willSetState != nil {
        throw refuse("HAR has no scenario states")
      }
      guard let request = request(of: item.matcher) else {
        throw refuse(
          "its matcher (\(item.matcher)) is not one method and absolute URL with a literal path "
            + "(and at most an exact or JSON body)")
      }
      if item.responses.isEmpty { throw refuse("it has no responses") }
      for response in item.responses {
        switch response.resolve(for: URLRequest(url: request.url)) {
        case .invalid(let problem): throw refuse(problem)
        case .webSocket:
          throw refuse("HAR holds HTTP responses only, and this is a WebSocket script")
        case .answer(let answer):
          guard answer.error == nil, let http = answer.response as? HTTPURLResponse else {
            throw refuse(
              "HAR holds HTTP responses only, and this entry answers "
                + (answer.error.map(ErrorText.describe) ?? "with a response that is not HTTP"))
          }
          var headers: [Header] = []
          for (name, value) in http.allHeaderFields {
            guard let name = name as? String, let value = value as? String,
              name.lowercased() != "content-length"
            else { continue }
            headers.append(Header(name: name, value: value))
          }
          headers.sort { $0.name.lowercased() < $1.name.lowercased() }
          let delay = response.delay.map {
            Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15
          }
          entries.append(
            Entry(
              request: request,
              response: Response(
                status: http.statusCode, headers: headers, body: answer.data ?? Data(),
                mimeType: http.value(forHTTPHeaderField: "Content-Type") ?? ""),
              time: delay ?? 0))
        }
      }
    }
    return entries
  }

  /// The one request a matcher names, if it names one.
  private static func request(of matcher: RequestMatcher) -> Request? {
    if let parts = matcher.exactParts {
      return Request(
        method: parts.method, url: parts.url, body: parts.body, mimeType: parts.mimeType)
    }
    guard case .all(let nodes) = matcher.node else { return nil }
    var method: String?
    var pattern: URLPattern?
    var body: Data?
    var mimeType: String?
    for node in nodes {
      switch node {
      case .method(let name) where method == nil: method = name
      case .pattern(let found) where pattern == nil: pattern = found
      case .body(let data) where body == nil: body = data
      case .jsonBody(let value) where body == nil:
        body = JSONWriter.compact(value)
        mimeType = "application/json"
      default: return nil
      }
    }
    guard let method, let pattern, let scheme = pattern.scheme, let host = pattern.host,
      pattern.literalPath != nil
    else { return nil }
    var components = URLComponents()
    components.scheme = scheme
    components.host = host
    components.port = pattern.port
    components.path = pattern.pathDescription
    if !pattern.query.isEmpty {
      components.queryItems = pattern.query.map { URLQueryItem(name: $0.name, value: $0.value) }
    }
    guard let url = components.url, ExactURL(url) != nil else { return nil }
    return Request(method: method, url: url, body: body, mimeType: mimeType)
  }

  /// A HAR 1.2 document holding `entries`: pretty printed, keys sorted.
  static func encode(_ entries: [Entry]) throws -> Data {
    let document: [String: Any] = [
      "log": [
        "version": "1.2",
        "creator": ["name": "HTTPSessionKit", "version": "1"],
        "entries": entries.map(object(for:)),
      ] as [String: Any]
    ]
    return try serialize(document)
  }

  static func serialize(_ document: Any) throws -> Data {
    do {
      var data = try JSONSerialization.data(
        withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
      data.append(UInt8(ascii: "\n"))
      return data
    } catch {
      throw MockBundleError(.unstorable, source: "HAR", "could not be encoded: \(error)")
    }
  }

  /// One entry as HAR 1.2 JSON.
  static func object(for entry: Entry) -> [String: Any] {
    let request = entry.request
    let response = entry.response
    var requestObject: [String: Any] = [
      "method": request.method,
      "url": request.url.absoluteString,
      "httpVersion": "HTTP/1.1",
      "cookies": [Any](),
      "headers": request.headers.map(object(for:)),
      "queryString": queryString(of: request.url),
      "headersSize": -1,
      "bodySize": request.body?.count ?? 0,
    ]
    if let body = request.body {
      var post: [String: Any] = [
        "mimeType": request.mimeType ?? "", "params": [Any](),
      ]
      if let text = text(of: body) {
        post["text"] = text
      } else {
        post["text"] = body.base64EncodedString()
        post["_encoding"] = "base64"
      }
      requestObject["postData"] = post
    }
    var content: [String: Any] = ["size": response.body.count, "mimeType": response.mimeType]
    if let text = text(of: response.body) {
      content["text"] = text
    } else {
      content["text"] = response.body.base64EncodedString()
      content["encoding"] = "base64"
    }
    let location = response.headers.first { $0.name.lowercased() == "location" }?.value
    var responseObject: [String: Any] = [
      "status": response.status,
      "statusText": response.statusText,
      "httpVersion": "HTTP/1.1",
      "cookies": [Any](),
      "headers": response.headers.map(object(for:)),
      "content": content,
      "redirectURL": location ?? "",
      "headersSize": -1,
      "bodySize": response.body.count,
    ]
    if let error = response.error { responseObject["_error"] = error }
    return [
      "startedDateTime": entry.startedDateTime,
      "time": entry.time,
      "request": requestObject,
      "response": responseObject,
      "cache": [String: Any](),
      "timings": ["send": 0, "wait": entry.time, "receive": 0] as [String: Any],
    ]
  }

  private static func object(for header: Header) -> [String: Any] {
    ["name": header.name, "value": header.value]
  }

  private static func queryString(of url: URL) -> [Any] {
    let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    return items.map { ["name": $0.name, "value": $0.value ?? ""] }
  }

  /// The body as text, when it is UTF-8 without NUL bytes.
  private static func text(of body: Data) -> String? {
    guard !body.contains(0), let text = String(data: body, encoding: .utf8) else { return nil }
    return text
  }

  /// `date` as HAR's `startedDateTime` (ISO 8601 with milliseconds, UTC).
  static func timestamp(_ date: Date) -> String {
    date.formatted(
      Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
  }
}

/// Gives the memory that loading a large recording freed back to the system.
///
/// glibc's allocator keeps freed memory in its heap, and reading a large recording frees much
/// of what it allocates (each entry's parsed value, the bundle it becomes) between allocations
/// that stay (the mock's stubs): the holes would stay resident for the life of the process.
/// `malloc_trim` returns their pages. It is looked up at run time: the C library module does
/// not declare it. A mock calls it once it has installed ``largeLoad`` stubs or more at once.
package enum FreedMemory {
  /// How many stubs installed at once make a load large.
  package static let largeLoad = 10_000

  package static func returnToSystem() {
    #if canImport(Glibc)
      typealias Trim = @convention(c) (Int) -> Int32
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else {
        return
      }
      _ = unsafeBitCast(symbol, to: Trim.self)(0)
    #endif
  }
}
