import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Our bundle format, `bundle.json` version 1: the declarative form of every stub the
/// factories make, pretty printed with sorted keys. The DocC article "Bundle file format"
/// describes it member by member.
enum BundleFormat {
  static let version = 1

  // MARK: - Writing

  /// Where bodies go: inline in the document, or (a folder) binary bodies and bodies read from
  /// files into sibling files, collected in `files`.
  struct Writer {
    let intoFolder: Bool
    var files: [String: Data] = [:]

    init(intoFolder: Bool) {
      self.intoFolder = intoFolder
    }

    mutating func document(_ bundle: MockBundle) throws(MockBundleError) -> JSONValue {
      var entries: [JSONValue] = []
      for (index, entry) in bundle.entries.enumerated() {
        entries.append(try self.entry(entry, index: index))
      }
      var members: [String: JSONValue] = [
        "version": .integer(Int64(BundleFormat.version)), "entries": .array(entries),
      ]
      if bundle.firstMatchWins { members["firstMatchWins"] = .bool(true) }
      return .object(members)
    }

    private mutating func entry(_ entry: MockBundle.Entry, index: Int) throws(MockBundleError)
      -> JSONValue
    {
      let path = "entries[\(index)]"
      func unstorable(_ part: String, _ why: String) -> MockBundleError {
        MockBundleError(
          .unstorable, source: "MockBundle", path: "\(path).\(part)",
          "the stub \(entry.matcher) (\(entry.origin)) cannot be stored in a file: \(why)")
      }
      if entry.dynamic != nil {
        throw unstorable(
          "responses",
          "its response is built by a closure; use the response factories (.json, .text, "
            + ".status, ...) or a list of responses")
      }
      var members: [String: JSONValue] = [
        "request": try MatcherCoding.encode(entry.matcher.node) { why in
          unstorable("request", why)
        }
      ]
      var responses: [JSONValue] = []
      for (number, response) in entry.responses.enumerated() {
        let part = entry.responses.count == 1 ? "response" : "responses[\(number)]"
        responses.append(
          try self.response(response, entry: index + 1, number: number + 1) { why in
            unstorable(part, why)
          })
      }
      if responses.count == 1 {
        members["response"] = responses[0]
      } else {
        members["responses"] = .array(responses)
      }
      if let times = entry.times { members["times"] = .integer(Int64(times)) }
      if let state = entry.whenState { members["whenState"] = .string(state) }
      if let state = entry.willSetState { members["willSetState"] = .string(state) }
      return .object(members)
    }

    private mutating func response(
      _ response: StubResponse, entry: Int, number: Int,
      unstorable: (String) -> MockBundleError
    ) throws(MockBundleError) -> JSONValue {
      var members: [String: JSONValue] = [:]
      switch response.content {
      case .http(let body, let status, let headers):
        members["status"] = .integer(Int64(status))
        if !headers.isEmpty { members["headers"] = .object(headers.mapValues { .string($0) }) }
        switch body {
        case .empty: break
        case .text(let text): members["text"] = .string(text)
        case .json(let data):
          if let value = try? JSONValue(parsing: data) {
            members["json"] = value
          } else {
            bytes(data, name: nil, entry: entry, number: number, into: &members)
          }
        case .data(let data):
          bytes(data, name: nil, entry: entry, number: number, into: &members)
        case .stored(let path, let data):
          bytes(data, name: path, entry: entry, number: number, into: &members, keepFile: true)
        case .file(let name, _):
          switch response.storage.bytes(of: body) {
          case .success(let data):
            bytes(data, name: name, entry: entry, number: number, into: &members, keepFile: true)
          case .failure(let problem):
            throw unstorable(problem.message)
          }
        }
      case .error(let error):
        guard let urlError = error as? URLError else {
          throw unstorable(
            "its error \(type(of: error)) is not a URLError; a file stores URLErrors by code")
        }
        members["error"] = .object(["urlError": ErrorCoding.encode(urlError.code)])
      case .raw:
        throw unstorable(
          "it is given as is (StubResponse(data:response:error:)); use .status, .data, .text, "
            + ".json or .error(URLError(...)) instead")
      case .invalid(let message):
        members["invalid"] = .string(message)
      }
      if let delay = response.delay { members["delay"] = .string(DurationCoding.encode(delay)) }
      if let dribble = response.dribble {
        members["dribble"] = .object([
          "chunks": .integer(Int64(dribble.chunks)),
          "over": .string(DurationCoding.encode(dribble.duration)),
        ])
      }
      return .object(members)
    }

    /// A body of bytes: text when it reads as text, else base64 inline or a sibling file.
    private mutating func bytes(
      _ data: Data, name: String?, entry: Int, number: Int, into members: inout [String: JSONValue],
      keepFile: Bool = false
    ) {
      let text = BodyCoding.text(of: data)
      if intoFolder && (keepFile || text == nil) {
        var path =
          name.flatMap { BundleFiles.isContained($0) ? $0 : nil }
          ?? "bodies/entry-\(entry)-\(number).bin"
        if let existing = files[path], existing != data {
          path = "bodies/entry-\(entry)-\(number)-" + (path as NSString).lastPathComponent
        }
        files[path] = data
        members["file"] = .string(path)
      } else if let text {
        members["text"] = .string(text)
      } else {
        members["base64"] = .string(data.base64EncodedString())
      }
    }
  }

  // MARK: - Reading

  static func read(_ data: Data, folder: URL?, source: String, name: String)
    throws(MockBundleError) -> MockBundle
  {
    let root = try JSONCursor.parse(data, source: source, duplicates: .refused)
    try root.rejectUnknownMembers(["version", "entries", "firstMatchWins"])
    let version = try root.required("version", "the format version, 1")
    guard try version.integer() == BundleFormat.version else {
      throw version.fail(
        "this library reads version \(BundleFormat.version) of the format, and the file is "
          + "version \(version.found)")
    }
    let files = BundleFiles(folder: folder, source: source)
    var entries: [MockBundle.Entry] = []
    for (index, element) in try root.required("entries", "a list of stubs").elements()
      .enumerated()
    {
      entries.append(try entry(element, origin: "\(name) entry \(index + 1)", files: files))
    }
    let firstMatchWins = try root.optional("firstMatchWins")?.bool() ?? false
    return MockBundle(entries: entries, firstMatchWins: firstMatchWins)
  }

  private static func entry(_ cursor: JSONCursor, origin: String, files: BundleFiles)
    throws(MockBundleError) -> MockBundle.Entry
  {
    try cursor.rejectUnknownMembers([
      "request", "response", "responses", "times", "whenState", "willSetState",
    ])
    let node = try MatcherCoding.decode(try cursor.required("request", "a matcher"))
    var responses: [StubResponse] = []
    switch (try cursor.optional("response"), try cursor.optional("responses")) {
    case (let one?, nil): responses = [try response(one, files: files)]
    case (nil, let list?):
      for element in try list.elements() { responses.append(try response(element, files: files)) }
    case (nil, nil):
      throw cursor.fail("expected a member \"response\" (an object) or \"responses\" (a list)")
    case (_?, _?):
      throw cursor.fail("has both \"response\" and \"responses\"; give one of them")
    }
    var times: Int?
    if let given = try cursor.optional("times") {
      times = try given.integer()
      if times ?? 0 < 0 { throw given.expected("a count of zero or more") }
    }
    return MockBundle.Entry(
      matcher: RequestMatcher(node, text: RequestMatcher.text(of: node)),
      responses: responses, times: times,
      whenState: try cursor.optional("whenState")?.string(),
      willSetState: try cursor.optional("willSetState")?.string(), origin: origin)
  }

  private static func response(_ cursor: JSONCursor, files: BundleFiles) throws(MockBundleError)
    -> StubResponse
  {
    try cursor.rejectUnknownMembers([
      "status", "headers", "text", "json", "base64", "file", "error", "invalid", "delay", "dribble",
    ])
    let members = Set(try cursor.keys())
    var response: StubResponse
    let bodyKeys = ["text", "json", "base64", "file"].filter { members.contains($0) }
    if let error = try cursor.optional("error") {
      if let other = ["status", "headers", "invalid"].first(where: { members.contains($0) }) {
        throw cursor.fail("has both \"error\" and \"\(other)\"; an error answer has no response")
      }
      if let other = bodyKeys.first {
        throw cursor.fail("has both \"error\" and \"\(other)\"; an error answer has no body")
      }
      try error.rejectUnknownMembers(["urlError"])
      let code = try ErrorCoding.decode(try error.required("urlError", "a URLError code"))
      response = StubResponse(.error(URLError(code)))
    } else if let invalid = try cursor.optional("invalid") {
      if let other = (["status", "headers"] + bodyKeys).first(where: { members.contains($0) }) {
        throw cursor.fail(
          "has both \"invalid\" and \"\(other)\"; an invalid answer has nothing else")
      }
      response = StubResponse(.invalid(try invalid.string()))
    } else {
      var status = 200
      if let given = try cursor.optional("status") {
        status = try given.integer()
        guard (100...999).contains(status) else {
          throw given.expected("an HTTP status code from 100 to 999")
        }
      }
      var headers: [String: String] = [:]
      if let given = try cursor.optional("headers") {
        for member in try given.members() {
          headers[member.key] = try given.member(member.key, member.value).string()
        }
      }
      if bodyKeys.count > 1 {
        throw cursor.fail(
          "has several bodies (\(bodyKeys.joined(separator: ", "))); give one of them")
      }
      var body = StubResponse.Body.empty
      if let text = try cursor.optional("text") {
        body = .text(try text.string())
      } else if let json = try cursor.optional("json") {
        body = .json(JSONWriter.compact(try json.json()))
      } else if let base64 = try cursor.optional("base64") {
        guard let data = Data(base64Encoded: try base64.string()) else {
          throw base64.expected("base64 text")
        }
        body = .data(data)
      } else if let file = try cursor.optional("file") {
        let path = try file.string()
        body = .stored(path: path, data: try files.read(path, at: file))
      }
      response = StubResponse(.http(body, status: status, headers: headers))
    }
    if let delay = try cursor.optional("delay") {
      response = response.delayed(by: try DurationCoding.decode(delay))
    }
    if let dribble = try cursor.optional("dribble") {
      try dribble.rejectUnknownMembers(["chunks", "over"])
      let chunks = try dribble.required("chunks", "a number of pieces")
      let count = try chunks.integer()
      guard count >= 1 else { throw chunks.expected("a number of pieces, 1 or more") }
      let overMember = try dribble.required("over", "a duration such as \"2s\"")
      let over = try DurationCoding.decode(overMember)
      guard over >= .zero else { throw overMember.expected("a duration of zero or more") }
      response = response.dribbled(inChunks: count, over: over)
    }
    return response
  }
}

/// Matchers as JSON: an object whose members are conditions that must all hold
/// (`{"method": "GET", "url": "/users/{login}", "headers": {"Accept": null}}`), or one of
/// `all`, `or`, `not` for the other combinations.
enum MatcherCoding {
  /// The members of a condition object, in the order their conditions are listed when read.
  static let order = [
    "any", "method", "url", "exactURL", "regex", "query", "headers", "body", "jsonBody",
    "mockingBird", "or", "not", "invalid",
  ]

  static func encode(
    _ node: RequestMatcher.Node, unstorable: (String) -> MockBundleError
  ) throws(MockBundleError) -> JSONValue {
    let node = node.normalized
    let nodes: [RequestMatcher.Node]
    if case .all(let list) = node { nodes = list } else { nodes = [node] }
    var members: [String: JSONValue] = [:]
    var flat = !nodes.isEmpty
    var lastRank = -1
    var lastHeader: String?
    for inner in nodes {
      let (key, value) = try condition(inner, unstorable: unstorable)
      guard let rank = order.firstIndex(of: key) else {
        flat = false
        break
      }
      if key == "headers", rank == lastRank, case .header(let name, _) = inner {
        // Several headers share one member, in name order.
        guard let previous = lastHeader, previous < name else {
          flat = false
          break
        }
        if case .object(var headers) = members["headers"], case .object(let more) = value {
          headers.merge(more) { $1 }
          members["headers"] = .object(headers)
        }
        lastHeader = name
        continue
      }
      guard rank > lastRank else {
        flat = false
        break
      }
      if case .header(let name, _) = inner { lastHeader = name }
      lastRank = rank
      members[key] = value
    }
    if flat { return .object(members) }
    guard nodes.count != 1 else {
      throw unstorable(
        "its matcher \(RequestMatcher.describe(node)) has no form in the file format")
    }
    var list: [JSONValue] = []
    for inner in nodes { list.append(try encode(inner, unstorable: unstorable)) }
    return .object(["all": .array(list)])
  }

  private static func condition(
    _ node: RequestMatcher.Node, unstorable: (String) -> MockBundleError
  ) throws(MockBundleError) -> (String, JSONValue) {
    switch node {
    case .any: return ("any", .bool(true))
    case .method(let method): return ("method", .string(method))
    case .pattern(let pattern): return ("url", .string(pattern.source))
    case .exactURL(let exact): return ("exactURL", .string(exact.url.absoluteString))
    case .regex(let source, _): return ("regex", .string(source))
    case .query(let items):
      var members: [String: JSONValue] = [:]
      for item in items { members[item.name] = item.value.map { .string($0) } ?? .null }
      // Repeated names cannot share an object: keep them apart in an "all".
      return (members.count == items.count ? "query" : "", .object(members))
    case .header(let name, let value):
      return ("headers", .object([name: value.map { .string($0) } ?? .null]))
    case .body(let data):
      if let text = BodyCoding.text(of: data) { return ("body", .object(["text": .string(text)])) }
      return ("body", .object(["base64": .string(data.base64EncodedString())]))
    case .jsonBody(let value): return ("jsonBody", value)
    case .condition(let request as MockingBirdRequest):
      var members: [String: JSONValue] = [
        "method": .string(request.method), "url": .string(request.url),
      ]
      if !request.parameters.isEmpty {
        var parameters: [String: JSONValue] = [:]
        for item in request.parameters {
          parameters[item.name] = item.value.map { .string($0) } ?? .null
        }
        members["parameters"] = .object(parameters)
      }
      return ("mockingBird", .object(members))
    case .either(let a, let b):
      return (
        "or",
        .array([try encode(a, unstorable: unstorable), try encode(b, unstorable: unstorable)])
      )
    case .not(let inner): return ("not", try encode(inner, unstorable: unstorable))
    case .invalid(let message): return ("invalid", .string(message))
    case .predicate(let description, _):
      throw unstorable(
        "its matcher RequestMatcher(\"\(description)\") { ... } runs a closure; build it from the "
          + "matcher factories (.get, .url, .regex, .query, .header, .body, .jsonBody, &&, ||, !)")
    case .condition(let condition):
      throw unstorable(
        "its matcher \(condition) is a rule of another file format, which this one cannot hold")
    case .all:
      return ("", .null)
    }
  }

  static func decode(_ cursor: JSONCursor) throws(MockBundleError) -> RequestMatcher.Node {
    let members = try cursor.members()
    let isRecorded = members.contains { $0.key == "exactURL" }
    if let all = try cursor.optional("all") {
      guard members.count == 1 else {
        throw cursor.fail("has \"all\" beside other members; put every condition in the list")
      }
      var nodes: [RequestMatcher.Node] = []
      for element in try all.elements() { nodes.append(try decode(element)) }
      return .all(nodes)
    }
    try cursor.rejectUnknownMembers(Set(order + ["all"]))
    guard !members.isEmpty else {
      throw cursor.fail(
        "expected at least one condition; use {\"any\": true} to match every request")
    }
    var nodes: [RequestMatcher.Node] = []
    for key in order {
      guard let member = try cursor.optional(key) else { continue }
      switch key {
      case "any":
        guard try member.bool() else { throw member.expected("true") }
        nodes.append(.any)
      case "method":
        let method = try member.string()
        guard !method.isEmpty else { throw member.expected("an HTTP method") }
        nodes.append(.method(method))
      case "url":
        let source = try member.string()
        do {
          nodes.append(.pattern(try URLPattern(parsing: source)))
        } catch {
          throw member.fail("the pattern \"\(source)\" is malformed: \(error.reason)")
        }
      case "regex":
        let source = try member.string()
        let matcher = RequestMatcher.regex(source)
        if case .invalid = matcher.node {
          throw member.fail("the regular expression /\(source)/ does not compile")
        }
        nodes.append(matcher.node)
      case "query":
        var items: [(name: String, value: String?)] = []
        for name in try member.keys().sorted() {
          items.append((name, try member.required(name, "").stringOrNull()))
        }
        nodes.append(.query(items))
      case "headers":
        for name in try member.keys().sorted() {
          nodes.append(.header(name, try member.required(name, "").stringOrNull()))
        }
      case "body":
        try member.rejectUnknownMembers(["text", "base64"])
        var data: Data?
        if let text = try member.optional("text") {
          data = Data(try text.string().utf8)
        } else if let base64 = try member.optional("base64") {
          data = Data(base64Encoded: try base64.string())
          if data == nil { throw base64.expected("base64 text") }
        }
        if let data {
          // A recorded request's body (beside "exactURL", which only recordings write) is
          // matched as HAR bodies are: a JSON object or array as a JSON value.
          nodes.append(isRecorded ? RequestMatcher.recordedBody(data, mimeType: nil) : .body(data))
        } else {
          throw member.fail("expected a member \"text\" or \"base64\"")
        }
      case "jsonBody":
        nodes.append(.jsonBody(try member.json()))
      case "mockingBird":
        try member.rejectUnknownMembers(["method", "url", "parameters"])
        var parameters: [MockingBirdRequest.Parameter] = []
        if let given = try member.optional("parameters") {
          for name in try given.keys().sorted() {
            parameters.append(.init(name: name, value: try given.required(name, "").stringOrNull()))
          }
        }
        nodes.append(
          .condition(
            MockingBirdRequest(
              method: try member.required("method", "an HTTP method").string(),
              url: try member.required("url", "://host[:port]/path").string(),
              parameters: parameters)))
      case "or":
        let sides = try member.elements()
        guard sides.count == 2 else { throw member.expected("a list of two matchers") }
        nodes.append(.either(try decode(sides[0]), try decode(sides[1])))
      case "not":
        nodes.append(.not(try decode(member)))
      case "invalid":
        nodes.append(.invalid(try member.string()))
      case "exactURL":
        let text = try member.string()
        guard let url = URL(string: text), let exact = ExactURL(url) else {
          throw member.expected("an absolute URL with a scheme and a host")
        }
        nodes.append(.exactURL(exact))
      default: break
      }
    }
    return nodes.count == 1 ? nodes[0] : .all(nodes)
  }
}

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
