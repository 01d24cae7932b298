import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// HAR 1.2 (the HTTP Archive format of browsers' and proxies' network panels), read as a
/// ``MockBundle`` and written from one.
///
/// **Reading.** Each entry becomes a stub for its method and exact URL (scheme, host, port, path
/// and the whole query, see ``ExactURL``), and for its body too when it has `postData` with a
/// `text`. It answers with the entry's status, its headers minus hop-by-hop ones and
/// `Content-Encoding`/`Content-Length` (the body in the file is already decoded), and
/// `content.text` as the body (base64-decoded when `content.encoding` says `base64`); with no
/// `Content-Type` header, `content.mimeType` becomes one. Entries with identical requests become
/// one stub whose responses play in recorded order, the last repeating. An entry with status 0
/// (a request the browser saw fail: Chrome writes these) answers with
/// `URLError(.networkConnectionLost)`. Everything a HAR may omit or leave empty (`-1` sizes,
/// missing `postData`, `cookies`, `timings` or `content`, an empty `text`, `_`-prefixed fields)
/// is ignored; what replay uses is checked, and a malformed value throws a ``MockBundleError`` with its
/// path: `log.entries[12].response.status: expected a number, got "abc"`.
///
/// **Writing.** Each response of each entry becomes one HAR entry, so a response sequence reads
/// back as the same sequence. Only an entry that names one request can be written: a matcher
/// made from a HAR entry, or an absolute pattern with a literal path (`.get("https://a.test/x")`,
/// written as that URL, which then replays exactly), each with at most an exact body; answers
/// must be HTTP responses. Anything else (path-only or parameterised patterns, regexes, headers,
/// JSON bodies, closures, `URLError` answers, `times`, scenario states) throws a ``MockBundleError`` that
/// names the entry. Delays are written as the entry's `time` and are not read back: replay is
/// immediate.
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

  /// The bundle a HAR document replays; `source` names the file in errors and in reports.
  static func read(_ data: Data, source: String) throws -> MockBundle {
    bundle(from: try entries(in: data, source: source), source: source)
  }

  /// The entries of a HAR document, checked.
  static func entries(in data: Data, source: String) throws -> [Entry] {
    let document: Any
    do {
      document = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    } catch {
      throw MockBundleError(
        .malformed, source: source, "expected a HAR document (JSON), got text that is not JSON")
    }
    let reader = Reader(source: source)
    let root = try reader.object(document, "")
    let log = try reader.object(root["log"], "log")
    let list = try reader.array(log["entries"], "log.entries")
    var entries: [Entry] = []
    entries.reserveCapacity(list.count)
    for (index, value) in list.enumerated() {
      entries.append(try reader.entry(value, "log.entries[\(index)]"))
    }
    return entries
  }

  /// The stubs that replay `entries`: one per distinct request, its responses in order.
  static func bundle(from entries: [Entry], source: String) -> MockBundle {
    var groups: [String: Int] = [:]
    var built: [(matcher: RequestMatcher, responses: [StubResponse], indexes: [Int])] = []
    for (index, entry) in entries.enumerated() {
      guard let exact = entry.request.exact ?? ExactURL(entry.request.url) else {
        continue  // the reader has checked that every URL is absolute
      }
      let matcher = RequestMatcher.exact(entry.request.method, exact, body: entry.request.body)
      let key = requestKey(matcher, body: entry.request.body)
      if let group = groups[key] {
        built[group].responses.append(stubResponse(entry))
        built[group].indexes.append(index)
      } else {
        groups[key] = built.count
        built.append((matcher, [stubResponse(entry)], [index]))
      }
    }
    let bundleEntries = built.map { group in
      let which =
        group.indexes.count == 1
        ? "entry \(group.indexes[0])"
        : "entries \(group.indexes.map(String.init).joined(separator: ", "))"
      return MockBundle.Entry(
        matcher: group.matcher, responses: group.responses,
        origin: "\(source) \(which) (\(group.matcher.description))")
    }
    return MockBundle(entries: bundleEntries, firstMatchWins: false)
  }

  /// What makes two requests identical for replay: method, the URL as ``ExactURL`` compares
  /// it, and the body.
  private static func requestKey(_ matcher: RequestMatcher, body: Data?) -> String {
    guard case .all(let nodes) = matcher.node else { return matcher.description }
    var key = ""
    for node in nodes {
      switch node {
      case .method(let method): key += method + " "
      case .exactURL(let exact):
        key += "\(exact.scheme)://\(exact.host):\(exact.port ?? -1)\(exact.path)?"
        key += exact.query.joined(separator: "&")
      default: continue
      }
    }
    if let body { key += "\n" + body.base64EncodedString() }
    return key
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

  /// Walks a parsed document, naming the path of whatever is wrong.
  struct Reader {
    let source: String

    func fail(_ path: String, _ expected: String, got value: Any?) -> MockBundleError {
      MockBundleError(
        .malformed, source: source, path: path, "expected \(expected), got \(describe(value))")
    }

    func describe(_ value: Any?) -> String {
      switch value {
      case nil: return "nothing (missing)"
      case is NSNull: return "null"
      case let text as String:
        let shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return "\"\(shown.replacing("\"", with: "\\\""))\""
      case let number as NSNumber where isBoolean(number):
        return number.boolValue ? "true" : "false"
      case let number as NSNumber: return "the number \(number)"
      case is [String: Any]: return "an object"
      case is [Any]: return "an array"
      default: return "\(type(of: value))"
      }
    }

    /// Whether a parsed value is `true` or `false`: JSONSerialization hands both numbers and
    /// booleans over as `NSNumber`, and `0 is Bool` holds, so the check is on the class.
    private func isBoolean(_ value: Any?) -> Bool {
      guard let number = value as? NSNumber else { return false }
      return ObjectIdentifier(type(of: number)) == Self.booleanClass
    }

    private static let booleanClass = ObjectIdentifier(type(of: NSNumber(value: true)))

    func object(_ value: Any?, _ path: String) throws(MockBundleError) -> [String: Any] {
      guard let object = value as? [String: Any] else { throw fail(path, "an object", got: value) }
      return object
    }

    func array(_ value: Any?, _ path: String) throws(MockBundleError) -> [Any] {
      guard let array = value as? [Any] else { throw fail(path, "an array", got: value) }
      return array
    }

    func string(_ value: Any?, _ path: String) throws(MockBundleError) -> String {
      guard let text = value as? String else { throw fail(path, "a string", got: value) }
      return text
    }

    /// A string, or `nil` when the field is missing or null.
    func optionalString(_ value: Any?, _ path: String) throws(MockBundleError) -> String? {
      if value == nil || value is NSNull { return nil }
      return try string(value, path)
    }

    func integer(_ value: Any?, _ path: String) throws(MockBundleError) -> Int {
      guard !(value is String), !isBoolean(value), let number = value as? NSNumber else {
        throw fail(path, "a number", got: value)
      }
      let double = number.doubleValue
      guard double.rounded() == double, abs(double) < 1e15 else {
        throw fail(path, "a whole number", got: value)
      }
      return Int(double)
    }

    func entry(_ value: Any?, _ path: String) throws(MockBundleError) -> Entry {
      let entry = try object(value, path)
      let request = try self.request(entry["request"], path + ".request")
      let response = try self.response(entry["response"], path + ".response")
      var result = Entry(request: request, response: response)
      if let started = entry["startedDateTime"] as? String { result.startedDateTime = started }
      if let time = entry["time"] as? NSNumber, !(entry["time"] is String) {
        result.time = time.doubleValue
      }
      return result
    }

    func request(_ value: Any?, _ path: String) throws(MockBundleError) -> Request {
      let request = try object(value, path)
      let method = try string(request["method"], path + ".method")
      guard !method.isEmpty, method.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
        throw fail(path + ".method", "an HTTP method", got: method)
      }
      let urlText = try string(request["url"], path + ".url")
      guard let url = URL(string: urlText), let exact = ExactURL(url) else {
        throw fail(path + ".url", "an absolute URL with a scheme and a host", got: urlText)
      }
      var result = Request(method: method, url: url, exact: exact)
      if let headers = request["headers"], !(headers is NSNull) {
        result.headers = try self.headers(headers, path + ".headers")
      }
      if let postData = request["postData"], !(postData is NSNull) {
        let post = try object(postData, path + ".postData")
        result.mimeType = try optionalString(post["mimeType"], path + ".postData.mimeType")
        if let text = try optionalString(post["text"], path + ".postData.text") {
          var encoding = try optionalString(post["encoding"], path + ".postData.encoding")
          if encoding == nil {
            encoding = try optionalString(post["_encoding"], path + ".postData._encoding")
          }
          result.body = try decode(text, encoding: encoding, path + ".postData")
        }
      }
      return result
    }

    func response(_ value: Any?, _ path: String) throws(MockBundleError) -> Response {
      let response = try object(value, path)
      let status = try integer(response["status"], path + ".status")
      guard status == 0 || (100...999).contains(status) else {
        throw fail(
          path + ".status", "an HTTP status from 100 to 999 (or 0)", got: response["status"])
      }
      var result = Response(status: status)
      if let text = response["statusText"] as? String { result.statusText = text }
      if let headers = response["headers"], !(headers is NSNull) {
        result.headers = try self.headers(headers, path + ".headers")
      }
      if let error = response["_error"] as? String { result.error = error }
      if let content = response["content"], !(content is NSNull) {
        let content = try object(content, path + ".content")
        result.mimeType = try optionalString(content["mimeType"], path + ".content.mimeType") ?? ""
        if let text = try optionalString(content["text"], path + ".content.text") {
          let encoding = try optionalString(content["encoding"], path + ".content.encoding")
          result.body = try decode(text, encoding: encoding, path + ".content")
        }
      }
      return result
    }

    func headers(_ value: Any, _ path: String) throws(MockBundleError) -> [Header] {
      let list = try array(value, path)
      var headers: [Header] = []
      headers.reserveCapacity(list.count)
      for (index, item) in list.enumerated() {
        let header = try object(item, "\(path)[\(index)]")
        let name = try string(header["name"], "\(path)[\(index)].name")
        let value = try string(header["value"], "\(path)[\(index)].value")
        headers.append(Header(name: name, value: value))
      }
      return headers
    }

    private func decode(_ text: String, encoding: String?, _ path: String) throws(MockBundleError)
      -> Data
    {
      switch encoding?.lowercased() {
      case nil, "", "utf-8", "utf8": return Data(text.utf8)
      case "base64":
        guard let data = Data(base64Encoded: text, options: [.ignoreUnknownCharacters]) else {
          throw fail(path + ".text", "base64 (the encoding says so)", got: text)
        }
        return data
      default:
        throw fail(path + ".encoding", "\"base64\" or nothing", got: encoding)
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
            + "(and at most an exact body)")
      }
      if item.responses.isEmpty { throw refuse("it has no responses") }
      for response in item.responses {
        switch response.resolve(for: URLRequest(url: request.url)) {
        case .invalid(let problem): throw refuse(problem)
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
      return Request(method: parts.method, url: parts.url, body: parts.body)
    }
    guard case .all(let nodes) = matcher.node else { return nil }
    var method: String?
    var pattern: URLPattern?
    var body: Data?
    for node in nodes {
      switch node {
      case .method(let name) where method == nil: method = name
      case .pattern(let found) where pattern == nil: pattern = found
      case .body(let data) where body == nil: body = data
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
    return Request(method: method, url: url, body: body)
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
