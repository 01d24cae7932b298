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
        try ResponseMembers.native.write(
          response, body: body, status: status, headers: headers, into: &members,
          fail: unstorable
        ) { data, name, members in
          bytes(data, name: name, entry: entry, number: number, into: &members)
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
      case .webSocket(let subprotocol, let steps):
        members["webSocket"] = WebSocketCoding.encode(subprotocol: subprotocol, steps: steps)
      case .proxy:
        throw unstorable(
          "it is proxied (.proxy(to:)), which this file format cannot say; write the bundle with "
            + "write(to:format: .wireMock)")
      }
      if let delay = response.delay { members["delay"] = .string(DurationCoding.encode(delay)) }
      if let distribution = response.delayDistribution {
        throw unstorable(
          "its random delay (\(distribution)) has no form in this file format; write the bundle "
            + "with write(to:format: .wireMock)")
      }
      if let part = response.dribble?.unstorablePart {
        throw unstorable("\(part) has no form in this file format yet")
      }
      if let dribble = response.dribble {
        var dribbleMembers: [String: JSONValue] = [
          "chunks": .integer(Int64(dribble.chunks)),
          "over": .string(DurationCoding.encode(dribble.duration)),
        ]
        if let sizes = dribble.pieceSizes {
          dribbleMembers["pieces"] = .array(sizes.map { .integer(Int64($0)) })
        }
        members["dribble"] = .object(dribbleMembers)
      }
      return .object(members)
    }

    /// A body of bytes: text when it reads as text, else base64 inline or a sibling file.
    private mutating func bytes(
      _ data: Data, name: String?, entry: Int, number: Int, into members: inout [String: JSONValue]
    ) {
      let stem = "bodies/entry-\(entry)-\(number)"
      switch BodyPlacement.place(
        data, name: name, intoFolder: intoFolder, stem: stem, files: &files)
      {
      case .file(let path): members["file"] = .string(path)
      case .text(let text): members["text"] = .string(text)
      case .base64(let base64): members["base64"] = .string(base64)
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
      "status", "reasonPhrase", "headers", "text", "json", "base64", "file", "error", "invalid",
      "delay", "dribble", "webSocket",
    ])
    let members = Set(try cursor.keys())
    var response: StubResponse
    let bodyKeys = ["text", "json", "base64", "file"].filter { members.contains($0) }
    if let script = try cursor.optional("webSocket") {
      let others = ["status", "reasonPhrase", "headers", "error", "invalid", "dribble"] + bodyKeys
      if let other = others.first(where: { members.contains($0) }) {
        throw cursor.fail(
          "has both \"webSocket\" and \"\(other)\"; a WebSocket script answers the upgrade alone")
      }
      response = try WebSocketCoding.decode(script)
    } else if let error = try cursor.optional("error") {
      if let other = ["status", "reasonPhrase", "headers", "invalid"].first(where: {
        members.contains($0)
      }) {
        throw cursor.fail("has both \"error\" and \"\(other)\"; an error answer has no response")
      }
      if let other = bodyKeys.first {
        throw cursor.fail("has both \"error\" and \"\(other)\"; an error answer has no body")
      }
      try error.rejectUnknownMembers(["urlError"])
      let code = try ErrorCoding.decode(try error.required("urlError", "a URLError code"))
      response = StubResponse(.error(URLError(code)))
    } else if let invalid = try cursor.optional("invalid") {
      if let other = (["status", "reasonPhrase", "headers"] + bodyKeys).first(where: {
        members.contains($0)
      }) {
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
      let head = try HeadCoding(of: cursor, phraseKey: "reasonPhrase")
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
      response = head.applied(to: StubResponse(.http(body, status: status, headers: head.fields)))
    }
    if let delay = try cursor.optional("delay") {
      response = response.delayed(by: try DurationCoding.decode(delay))
    }
    if let dribble = try cursor.optional("dribble") {
      try dribble.rejectUnknownMembers(["chunks", "over", "pieces"])
      let chunks = try dribble.required("chunks", "a number of pieces")
      let count = try chunks.integer()
      guard count >= 1 else { throw chunks.expected("a number of pieces, 1 or more") }
      let overMember = try dribble.required("over", "a duration such as \"2s\"")
      let over = try DurationCoding.decode(overMember)
      guard over >= .zero else { throw overMember.expected("a duration of zero or more") }
      if let piecesMember = try dribble.optional("pieces") {
        var sizes: [Int] = []
        for element in try piecesMember.elements() { sizes.append(try element.integer()) }
        guard sizes.count == count, sizes.allSatisfy({ $0 > 0 }) else {
          throw piecesMember.expected("\(count) piece sizes, each 1 or more")
        }
        var length = 0
        if case .http(let form, _, _) = response.content,
          case .success(let bytes) = response.storage.bytes(of: form)
        {
          length = bytes.count
        }
        var total = 0
        for size in sizes {
          let (sum, overflow) = total.addingReportingOverflow(size)
          total = overflow ? .max : sum
        }
        guard total == length else {
          throw piecesMember.expected("piece sizes that add up to the body's \(length) bytes")
        }
        response = response.dribbled(inPiecesOf: sizes, over: over)
      } else {
        response = response.dribbled(inChunks: count, over: over)
      }
    }
    return response
  }
}
