import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One WireMock stub mapping: its identity, its name, and the bundle entry it reads as.
///
/// The admin API's view of a mapping (`POST /__admin/mappings` reads one, `GET` lists them):
///
/// ```swift
/// let mapping = try WireMockMapping(json: body, source: "POST /__admin/mappings")
/// mock.load(MockBundle(entries: [mapping.entry], firstMatchWins: false))
/// ```
package struct WireMockMapping: Sendable {
  /// `"id"` or `"uuid"` from the file; made when absent.
  package var id: UUID
  /// The mapping's `"name"`.
  package var name: String?
  /// The matcher, responses, scenario and priority.
  package var entry: MockBundle.Entry
  /// The mapping's `"metadata"` object, if it has one.
  var metadata: JSONValue?

  /// The mapping's `"metadata"` object as compact JSON, if it has one.
  package var metadataJSON: Data? {
    metadata.map(JSONWriter.compact)
  }

  /// Whether the metadata matches the WireMock value pattern `pattern` (the body of
  /// `/__admin/mappings/remove-by-metadata`, such as `{"matchesJsonPath": "$.tags"}`); a
  /// mapping without metadata matches nothing but `absent`.
  package func metadataMatches(pattern: Data, source: String) throws -> Bool {
    try WireMockMetadataPattern(json: pattern, source: source).matches(self)
  }

  init(id: UUID = UUID(), name: String? = nil, entry: MockBundle.Entry, metadata: JSONValue? = nil)
  {
    self.id = id
    self.name = name
    self.entry = entry
    self.metadata = metadata
  }

  /// Decodes one mapping object (the body of POST /__admin/mappings); `source` names it in
  /// errors ("POST /__admin/mappings" or a file name).
  package init(json data: Data, source: String) throws {
    let root = try WireMockFormat.adminBody(data, source: source)
    self = try WireMockFormat.mapping(
      root, origin: source, files: BundleFiles(folder: nil, source: source))
  }

  /// The mapping as WireMock's JSON (with "id" and "uuid"), for GET /__admin/mappings.
  package func json() throws -> Data {
    JSONWriter.pretty(try jsonValue())
  }

  /// The mapping as WireMock's JSON value, bodies inline.
  package func jsonValue() throws -> JSONValue {
    var writer = WireMockFormat.Writer(intoFolder: false)
    return try writer.mapping(self, index: 0)
  }
}

extension RequestMatcher {
  /// A WireMock request pattern (the body of /__admin/requests/count, find, wait's
  /// "pattern"): the "request" part of a mapping on its own.
  package static func wireMockPattern(json data: Data, source: String) throws -> RequestMatcher {
    let root = try WireMockFormat.adminBody(data, source: source)
    return try WireMockFormat.request(root)
  }
}

/// WireMock's stub mappings, as WireMock 2.35 reads them: a root folder holding `mappings/`
/// (read recursively, files in path order) and `__files/` for `bodyFileName`, a single mapping
/// file, or a `{"mappings": [...]}` file.
///
/// Every member WireMock defines for what this package can do is read; members it does not
/// define are refused, naming the member (WireMock answers 422 for them), and so are the
/// features this package does not have, by name: XML and JSON-schema matching, multipart and
/// custom matchers, response templating.
enum WireMockFormat {
  /// The members of a mapping.
  static let mappingMembers: Set = [
    "id", "uuid", "name", "request", "response", "priority", "scenarioName",
    "requiredScenarioState", "newScenarioState", "metadata", "persistent", "insertionIndex",
    "postServeActions",
  ]
  static let requestMembers: Set = [
    "method", "url", "urlPath", "urlPathPattern", "urlPattern", "urlPathTemplate",
    "pathParameters", "queryParameters", "headers", "cookies", "basicAuthCredentials",
    "basicAuth", "bodyPatterns", "multipartPatterns", "customMatcher",
  ]
  static let responseMembers: Set = [
    "status", "statusMessage", "headers", "body", "jsonBody", "base64Body", "bodyFileName",
    "fixedDelayMilliseconds", "delayDistribution", "chunkedDribbleDelay", "fault",
    "proxyBaseUrl", "additionalProxyRequestHeaders", "removeProxyRequestHeaders", "transformers",
    "transformerParameters",
  ]
  /// The members of a value pattern object.
  static let patternMembers: Set = [
    "equalTo", "caseInsensitive", "contains", "matches", "doesNotMatch", "absent",
    "equalToJson", "ignoreArrayOrder", "ignoreExtraElements", "matchesJsonPath", "and", "or",
    "binaryEqualTo", "equalToXml", "matchesXPath", "matchesJsonSchema", "before", "after",
    "equalToDateTime", "expression", "doesNotContain",
  ]
  /// Members WireMock knows that this package refuses, with why.
  static let refused: [String: String] = [
    "equalToXml": "XML matching (equalToXml) is not supported: there is no XML parser on iOS",
    "matchesXPath": "XPath matching (matchesXPath) is not supported: there is no XML parser on iOS",
    "matchesJsonSchema": "JSON schema matching (matchesJsonSchema) is not supported",
    "multipartPatterns": "multipart matching (multipartPatterns) is not supported",
    "customMatcher": "custom matchers (customMatcher) are Java extensions and cannot be read",
    "before": "date-time matching (before) is not supported",
    "after": "date-time matching (after) is not supported",
    "equalToDateTime": "date-time matching (equalToDateTime) is not supported",
  ]

  // MARK: - Finding the mappings

  /// Whether `folder` is a WireMock root: it holds a `mappings` folder.
  static func isRoot(_ folder: URL) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(
      atPath: folder.appendingPathComponent("mappings").path, isDirectory: &isDirectory)
      && isDirectory.boolValue
  }

  /// Reads every `.json` file under `root/mappings`, recursively, in path order.
  static func read(root: URL) throws(MockBundleError) -> MockBundle {
    MockBundle(entries: try mappings(inRoot: root).map(\.entry), firstMatchWins: false)
  }

  /// The mappings of every `.json` file under `root/mappings`, recursively, in path order,
  /// each with its id and name.
  static func mappings(inRoot root: URL) throws(MockBundleError) -> [WireMockMapping] {
    try mappings(inRoot: root, skippingUnreadable: false).mappings
  }

  /// The mappings of every `.json` file under `root/mappings`, as ``mappings(inRoot:)`` reads
  /// them; with `skippingUnreadable`, a file that cannot be read is left out and its error
  /// listed in `skipped`, instead of failing the whole root.
  static func mappings(inRoot root: URL, skippingUnreadable: Bool) throws(MockBundleError) -> (
    mappings: [WireMockMapping], skipped: [MockBundleError]
  ) {
    let mappings = root.appendingPathComponent("mappings", isDirectory: true)
    let files = BundleFiles(
      folder: root.appendingPathComponent("__files", isDirectory: true), source: root.path)
    var paths: [String] = []
    let enumerator = FileManager.default.enumerator(atPath: mappings.path)
    while let next = enumerator?.nextObject() as? String {
      if next.lowercased().hasSuffix(".json") { paths.append(next) }
    }
    var result: [WireMockMapping] = []
    var skipped: [MockBundleError] = []
    for path in paths.sorted() {
      let url = mappings.appendingPathComponent(path)
      do throws(MockBundleError) {
        let data: Data
        do {
          data = try Data(contentsOf: url)
        } catch {
          throw MockBundleError(
            .unreadable, source: url.path, "cannot be read (\(error.localizedDescription))")
        }
        let fileFiles = BundleFiles(folder: files.folder, source: url.path)
        result += try self.mappings(
          in: data, source: url.path, name: "mappings/" + path, files: fileFiles)
      } catch {
        guard skippingUnreadable else { throw error }
        skipped.append(error)
      }
    }
    return (result, skipped)
  }

  /// Reads one file: a mapping, or `{"mappings": [...]}`; `folder` is where `__files` is looked
  /// for (the file's folder's `__files`, or its parent's when the file is in `mappings/`).
  static func read(_ data: Data, file: URL) throws(MockBundleError) -> MockBundle {
    var folder = file.deletingLastPathComponent()
    if folder.lastPathComponent == "mappings" { folder = folder.deletingLastPathComponent() }
    let files = BundleFiles(
      folder: folder.appendingPathComponent("__files", isDirectory: true), source: file.path)
    let mappings = try self.mappings(
      in: data, source: file.path, name: file.lastPathComponent, files: files)
    return MockBundle(entries: mappings.map(\.entry), firstMatchWins: false)
  }

  /// The mappings of one document: one mapping, or a `{"mappings": [...]}` list.
  static func mappings(in data: Data, source: String, name: String, files: BundleFiles)
    throws(MockBundleError) -> [WireMockMapping]
  {
    let root = try JSONCursor.parse(
      data, source: source, duplicates: .lastWins, dialect: .wireMock)
    if let list = try root.optional("mappings") {
      try root.rejectUnknownMembers(["mappings", "meta"])
      var result: [WireMockMapping] = []
      for (index, element) in try list.elements().enumerated() {
        result.append(try mapping(element, origin: "\(name) mapping \(index + 1)", files: files))
      }
      return result
    }
    return [try mapping(root, origin: name, files: files)]
  }

  /// Whether a document looks like WireMock's: an object with `request` and `response`, or
  /// with `mappings`.
  static func recognises(_ keys: Set<String>) -> Bool {
    keys.contains("mappings") || (keys.contains("request") && keys.contains("response"))
  }

  // MARK: - Reading a mapping

  static func rejectUnknown(_ cursor: JSONCursor, _ known: Set<String>, what: String)
    throws(MockBundleError)
  {
    for key in try cursor.keys().sorted() {
      let member = JSONCursor(.null, path: cursor.child(key), text: cursor.text)
      if let why = refused[key], known.contains(key) || patternMembers.contains(key) {
        throw member.fail(why, kind: .unsupported)
      }
      guard known.contains(key) else {
        throw member.fail(
          "unknown field \"\(key)\" of \(what) (WireMock refuses it too, with 422); expected one of "
            + known.subtracting(refused.keys).sorted().joined(separator: ", "))
      }
    }
  }

  static func mapping(_ cursor: JSONCursor, origin: String, files: BundleFiles)
    throws(MockBundleError) -> WireMockMapping
  {
    try rejectUnknown(cursor, mappingMembers, what: "a mapping")
    var id: UUID?
    for key in ["id", "uuid"] {
      guard let member = try cursor.optional(key), !member.isNull else { continue }
      // Exactly a UUID: Foundation's parser skips what follows one (`...-38c9b00da3f7\u0000x`).
      guard let parsed = exactUUID(try member.string()) else {
        throw member.expected("a UUID such as 8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7")
      }
      if let id, id != parsed { throw member.fail("differs from \"id\"; give one UUID") }
      id = parsed
    }
    let name = try cursor.optionalString("name")
    let matcher = try request(try cursor.required("request", "the request to match"))
    var notes: [String] = []
    let response = try self.response(
      try cursor.required("response", "what to answer"), files: files, notes: &notes)
    var priority: Int?
    if let given = try cursor.optional("priority"), !given.isNull {
      priority = try given.integer()
      if priority ?? 0 < 1 { throw given.expected("a priority of 1 or more") }
    }
    let scenario = try cursor.optionalString("scenarioName")
    // Without a scenario name WireMock ignores the states (measured on 2.35.1): so does this.
    let required = scenario == nil ? nil : try cursor.optionalString("requiredScenarioState")
    let next = scenario == nil ? nil : try cursor.optionalString("newScenarioState")
    if scenario == nil {
      _ = try cursor.optionalString("requiredScenarioState")
      _ = try cursor.optionalString("newScenarioState")
    }
    var metadata: JSONValue?
    if let given = try cursor.optional("metadata"), !given.isNull {
      _ = try given.members()
      metadata = try given.json()
    }
    _ = try cursor.optional("persistent")?.bool()
    let label = name.map { "\(origin) (\($0))" } ?? origin
    notes += try postServeActions(cursor, source: files.source)
    var entry = MockBundle.Entry(
      matcher: matcher, responses: [response], times: nil, whenState: required,
      willSetState: next, origin: label)
    entry.scenario = scenario
    entry.priority = priority
    entry.notes = notes
    return WireMockMapping(id: id ?? UUID(), name: name, entry: entry, metadata: metadata)
  }

  /// What a mapping's `postServeActions` (webhooks and other extensions) say once it is loaded:
  /// they are read, not performed, and the mapping answers as WireMock answers it.
  private static func postServeActions(_ cursor: JSONCursor, source: String)
    throws(MockBundleError) -> [String]
  {
    guard let given = try cursor.optional("postServeActions"), !given.isNull else { return [] }
    var names: [String] = []
    if case .object = given.node {
      // The older form, an object keyed by action name, which WireMock 2.35.1 still reads.
      names = try given.members().map(\.key)
    } else {
      for element in try given.elements() {
        names.append(try element.optionalString("name") ?? "unnamed")
      }
    }
    guard !names.isEmpty else { return [] }
    return [
      "\(source): \(given.path): post-serve actions (\(names.joined(separator: ", "))) are "
        + "not performed by this package: the mapping answers, and no webhook is sent. Stub the "
        + "webhook's receiver, or send the call from the test."
    ]
  }

  /// A mapping's `request`: a ``RequestMatcher``.
  static func request(_ cursor: JSONCursor) throws(MockBundleError) -> RequestMatcher {
    try rejectUnknown(cursor, requestMembers, what: "a request")
    var method: String?
    if let given = try cursor.optional("method"), !given.isNull {
      let text = try given.string()
      guard !text.isEmpty else { throw given.expected("an HTTP method or ANY") }
      method = text == "ANY" ? nil : text
    }
    let urlKeys = ["url", "urlPath", "urlPathPattern", "urlPattern", "urlPathTemplate"]
    var rule = WireMockRequest.URLRule.any
    var found: String?
    for key in urlKeys {
      guard let member = try cursor.optional(key), !member.isNull else { continue }
      if let found {
        throw member.fail(
          "a request gives one of \(urlKeys.joined(separator: ", ")); it has \(found) too")
      }
      found = key
      let text = try member.string()
      switch key {
      case "url": rule = .url(text)
      case "urlPath": rule = .urlPath(text)
      case "urlPathPattern", "urlPattern":
        guard let regex = WireMockRequest.Regex(text) else {
          throw member.fail("the regular expression /\(text)/ does not compile")
        }
        rule = key == "urlPattern" ? .urlPattern(text, regex) : .urlPathPattern(text, regex)
      default:
        rule = try template(text, at: member)
      }
    }
    var condition = WireMockRequest(method: method, url: rule)
    if let given = try cursor.optional("pathParameters") {
      guard case .urlPathTemplate(_, _, let names) = rule else {
        throw given.fail("pathParameters need a urlPathTemplate")
      }
      for member in try given.members() {
        let inner = given.member(member.key, member.value)
        guard names.contains(member.key) else {
          throw inner.fail("the template has no parameter {\(member.key)}")
        }
        condition.pathParameters.append((member.key, try pattern(inner)))
      }
    }
    var nodes: [RequestMatcher.Node] = [.condition(condition)]
    var text = ReportText(condition.description)
    func add(_ matcher: RequestMatcher) {
      nodes.append(matcher.node)
      text = text + " " + matcher.text
    }
    for (key, target) in [
      ("queryParameters", ValueTarget.query), ("headers", ValueTarget.header),
      ("cookies", ValueTarget.cookie),
    ] {
      guard let given = try cursor.optional(key) else { continue }
      for member in try given.members() {
        add(.value(target(member.key), try pattern(given.member(member.key, member.value))))
      }
    }
    // `basicAuth` is the member's old name, which WireMock 2.35.1 still reads as
    // `basicAuthCredentials` (measured on the jar); with both, the newer one counts.
    var credentials = try cursor.optional("basicAuthCredentials")
    if credentials == nil { credentials = try cursor.optional("basicAuth") }
    if let given = credentials {
      try given.rejectUnknownMembers(["username", "password"])
      add(
        .basicAuth(
          username: try given.required("username", "a user name").string(),
          password: try given.required("password", "a password").string()))
    }
    if let given = try cursor.optional("bodyPatterns") {
      for element in try given.elements() {
        if let binary = try element.optional("binaryEqualTo") {
          try element.rejectUnknownMembers(["binaryEqualTo"])
          guard let data = Data(base64Encoded: try binary.string()) else {
            throw binary.expected("base64 text")
          }
          add(.body(data))
        } else {
          add(.value(.body, try pattern(element)))
        }
      }
    }
    let node: RequestMatcher.Node = nodes.count == 1 ? nodes[0] : .all(nodes)
    return RequestMatcher(node, text: text)
  }

  private static func template(_ text: String, at cursor: JSONCursor) throws(MockBundleError)
    -> WireMockRequest.URLRule
  {
    guard text.hasPrefix("/") else { throw cursor.expected("a path starting with /") }
    var segments: [String?] = []
    var names: [String] = []
    for part in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
      if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
        let name = String(part.dropFirst().dropLast())
        if names.contains(name) { throw cursor.fail("the parameter {\(name)} appears twice") }
        names.append(name)
        segments.append(nil)
      } else {
        segments.append(String(part).removingPercentEncoding ?? String(part))
      }
    }
    return .urlPathTemplate(text, segments: segments, names: names)
  }

  /// A value pattern object: `{"equalTo": "x"}`, `{"matches": "..."}`, `{"and": [...]}`.
  static func pattern(_ cursor: JSONCursor, depth: Int = 0) throws(MockBundleError) -> ValuePattern
  {
    guard depth < 32 else { throw cursor.fail("patterns nested too deeply") }
    try rejectUnknown(cursor, patternMembers, what: "a value pattern")
    let keys = Set(try cursor.keys())
    let operators = [
      "equalTo", "contains", "doesNotContain", "matches", "doesNotMatch", "absent", "equalToJson",
      "matchesJsonPath", "and", "or",
    ].filter { keys.contains($0) }
    guard operators.count == 1, let key = operators.first else {
      if operators.isEmpty {
        throw cursor.fail(
          "expected a value pattern: one of equalTo, contains, matches, doesNotMatch, absent, "
            + "equalToJson, matchesJsonPath, and, or, doesNotContain")
      }
      throw cursor.fail("has several patterns (\(operators.joined(separator: ", "))); give one")
    }
    func allow(_ extra: Set<String>) throws(MockBundleError) {
      for other in keys.subtracting([key]).sorted() where !extra.contains(other) {
        throw JSONCursor(.null, path: cursor.child(other), text: cursor.text).fail(
          "does not go with \(key)")
      }
    }
    let member = try cursor.required(key, "")
    switch key {
    case "equalTo":
      try allow(["caseInsensitive"])
      return .equalTo(
        try member.string(),
        caseInsensitive: try cursor.optional("caseInsensitive")?.bool() ?? false)
    case "contains":
      try allow([])
      return .contains(try member.string())
    case "doesNotContain":
      try allow([])
      return .doesNotContain(try member.string())
    case "matches", "doesNotMatch":
      try allow([])
      let source = try member.string()
      let made: ValuePattern = key == "matches" ? .matches(source) : .doesNotMatch(source)
      if case .invalid = made.rule {
        throw member.fail("the regular expression /\(source)/ does not compile")
      }
      return made
    case "absent":
      try allow([])
      guard try member.bool() else { throw member.expected("true") }
      return .absent
    case "equalToJson":
      try allow(["ignoreArrayOrder", "ignoreExtraElements"])
      let value: JSONValue
      if case .string(let text) = member.node {
        let parsed = try JSONCursor.parse(
          Data(text.utf8), source: cursor.source, duplicates: .lastWins)
        do {
          value = try parsed.json()
        } catch {
          throw member.fail("the JSON in this string does not parse: \(error.problem)")
        }
      } else {
        value = try member.json()
      }
      return ValuePattern(
        .equalToJSON(
          value,
          JSONEquivalence(
            ignoresArrayOrder: try cursor.optional("ignoreArrayOrder")?.bool() ?? false,
            ignoresExtraElements: try cursor.optional("ignoreExtraElements")?.bool() ?? false)))
    case "matchesJsonPath":
      try allow([])
      let expression: String
      var inner: ValuePattern?
      if case .string(let text) = member.node {
        expression = text
      } else {
        expression = try member.required("expression", "a JSONPath expression").string()
        let rest = try member.keys().filter { $0 != "expression" }
        if !rest.isEmpty {
          var members: [JSONMember] = []
          if case .object(let all) = member.node { members = all.filter { $0.key != "expression" } }
          inner = try pattern(
            JSONCursor(.object(members), path: member.path, text: member.text), depth: depth + 1)
        }
      }
      let path: JSONPath
      do {
        path = try JSONPath(parsing: expression)
      } catch {
        throw member.fail(
          "the JSONPath \"\(expression)\" is not one this package reads: \(error.reason)")
      }
      return ValuePattern(.jsonPath(path, inner))
    default:
      try allow([])
      var list: [ValuePattern] = []
      for element in try member.elements() { list.append(try pattern(element, depth: depth + 1)) }
      guard !list.isEmpty else { throw member.expected("a list of patterns") }
      return key == "and" ? .and(list) : .or(list)
    }
  }

  /// A `delayDistribution`: `{"type": "uniform", "lower": 20, "upper": 80}` or
  /// `{"type": "lognormal", "median": 80, "sigma": 0.4}` (milliseconds), with an optional
  /// `"seed"` (this package's: the delays repeat from run to run, 0 when none is given).
  static func distribution(_ cursor: JSONCursor) throws(MockBundleError) -> DelayDistribution {
    let type = try cursor.required("type", "uniform or lognormal").string()
    func milliseconds(_ key: String) throws(MockBundleError) -> Duration {
      let member = try cursor.required(key, "milliseconds")
      guard let value = member.finiteNumber, value >= 0, value < 1e12 else {
        throw member.expected("a number of milliseconds, 0 or more")
      }
      return .microseconds(Int64(value * 1000))
    }
    var seed: UInt64 = 0
    if let given = try cursor.optional("seed") {
      guard let value = UInt64(exactly: try given.integer()) else {
        throw given.expected("a seed, 0 or more")
      }
      seed = value
    }
    switch type {
    case "uniform":
      try cursor.rejectUnknownMembers(["type", "lower", "upper", "seed"])
      return .uniform(
        lower: try milliseconds("lower"), upper: try milliseconds("upper"), seed: seed)
    case "lognormal":
      try cursor.rejectUnknownMembers(["type", "median", "sigma", "maxValue", "seed"])
      let sigma = try cursor.required("sigma", "a number")
      guard let value = sigma.finiteNumber, value >= 0 else {
        throw sigma.expected("a number, 0 or more")
      }
      let maximum: Duration? = try cursor.has("maxValue") ? try milliseconds("maxValue") : nil
      return .logNormal(
        median: try milliseconds("median"), sigma: value, maximum: maximum, seed: seed)
    default:
      throw try cursor.required("type", "").expected("uniform or lognormal")
    }
  }

  // MARK: - Reading a response

  /// A mapping's `response`; `notes` gets what is loaded but not as WireMock would answer it
  /// (a transformer this package does not have, a template that does not parse).
  static func response(
    _ cursor: JSONCursor, files: BundleFiles, notes templateNotes: inout [String]
  )
    throws(MockBundleError) -> StubResponse
  {
    try rejectUnknown(cursor, responseMembers, what: "a response")
    let keys = Set(try cursor.keys())
    var status = 200
    if let given = try cursor.optional("status") {
      status = try given.integer()
      guard (100...999).contains(status) else {
        throw given.expected("an HTTP status code from 100 to 999")
      }
    }
    let head = try HeadCoding(of: cursor, phraseKey: "statusMessage")
    let bodyKeys = ["body", "jsonBody", "base64Body", "bodyFileName"].filter { keys.contains($0) }
    if bodyKeys.count > 1 {
      throw cursor.fail("has several bodies (\(bodyKeys.joined(separator: ", "))); give one")
    }
    let templating = try transformers(cursor, notes: &templateNotes)
    var templatedFile: (name: String, cursor: JSONCursor)?
    var body = StubResponse.Body.empty
    if let given = try cursor.optional("body") {
      // WireMock reads `body` as a string and takes a scalar's JSON text as it is written
      // (`true`, `42`, `1.50`, `1e2`; null is no body); an object or an array it refuses
      // (measured on 2.35.1).
      switch given.node {
      case .null: break
      case .bool(let flag): body = .text(String(flag))
      case .number(let text): body = .text(text)
      case .array, .object:
        throw given.expected("a string (WireMock reads the body as text; use jsonBody for JSON)")
      default: body = .text(try given.string())
      }
    } else if let given = try cursor.optional("jsonBody") {
      _ = try given.json()  // every number representable, every string text
      body = .json(try given.compactText())
    } else if let given = try cursor.optional("base64Body") {
      guard let data = Data(base64Encoded: try given.string()) else {
        throw given.expected("base64 text")
      }
      body = .data(data)
    } else if let given = try cursor.optional("bodyFileName") {
      let path = try given.string()
      if path.contains("{{") {
        // A templated name: the file is chosen, and read, for each request (see §Templating).
        templatedFile = (path, given)
      } else {
        body = .stored(path: path, data: try files.read(path, at: given))
      }
    }
    var response = head.applied(to: StubResponse(.http(body, status: status, headers: head.fields)))
    if templating.enabled || templatedFile != nil {
      response = response.templated(
        fileName: templatedFile?.name, folder: files.folder, parameters: templating.parameters)
      if let problem = response.template?.problem {
        templateNotes.append(
          "\(cursor.source): \(cursor.path.isEmpty ? "response" : cursor.path): \(problem); the "
            + "mapping is loaded and a request it answers fails with this report, as in WireMock")
      }
    }
    if let given = try cursor.optional("fault"), !given.isNull {
      let name = try given.string()
      guard let fault = StubResponse.Fault(rawValue: name) else {
        throw given.expected(
          "a fault: " + StubResponse.Fault.allCases.map(\.rawValue).joined(separator: ", "))
      }
      response = .fault(fault)
    }
    if let given = try cursor.optional("delayDistribution"), !given.isNull {
      response = response.delayed(by: try distribution(given))
    }
    if let given = try cursor.optional("fixedDelayMilliseconds"), !given.isNull {
      let milliseconds = try given.integer()
      guard milliseconds >= 0 else { throw given.expected("a number of milliseconds, 0 or more") }
      response = response.delayed(by: .milliseconds(milliseconds))
    }
    if let given = try cursor.optional("chunkedDribbleDelay"), !given.isNull {
      try given.rejectUnknownMembers(["numberOfChunks", "totalDuration"])
      let chunks = try given.required("numberOfChunks", "a number of chunks")
      let count = try chunks.integer()
      guard count >= 1 else { throw chunks.expected("a number of chunks, 1 or more") }
      let total = try given.required("totalDuration", "milliseconds")
      let milliseconds = try total.integer()
      guard milliseconds >= 0 else { throw total.expected("a number of milliseconds, 0 or more") }
      response = response.dribbled(inChunks: count, over: .milliseconds(milliseconds))
    }
    if let given = try cursor.optional("proxyBaseUrl"), !given.isNull {
      response = try proxy(given, cursor, keys: keys)
      if templating.enabled { response = response.templated() }
    } else {
      for key in ["additionalProxyRequestHeaders", "removeProxyRequestHeaders"]
      where keys.contains(key) {
        throw try cursor.required(key, "").fail("is given without proxyBaseUrl")
      }
    }
    return response
  }

  /// The mapping's `transformers` (a list of names) and `transformerParameters` (an object):
  /// whether `response-template` is among them, the parameters templates read as
  /// `parameters`, and a note for each name this package does not have.
  private static func transformers(_ cursor: JSONCursor, notes templateNotes: inout [String])
    throws(MockBundleError) -> (enabled: Bool, parameters: JSONValue?)
  {
    var enabled = false
    if let given = try cursor.optional("transformers"), !given.isNull {
      var unknown: [String] = []
      for element in try given.elements() {
        let name = try element.string()
        if name == "response-template" {
          enabled = true
        } else {
          unknown.append(name)
        }
      }
      if !unknown.isEmpty {
        templateNotes.append(
          "\(cursor.source): \(given.path): the transformer"
            + (unknown.count == 1 ? " " : "s ")
            + unknown.map { "\"\($0)\"" }.joined(separator: ", ")
            + (unknown.count == 1 ? " is a WireMock extension" : " are WireMock extensions")
            + " this package does not have; the mapping answers without "
            + (unknown.count == 1 ? "it" : "them"))
      }
    }
    var parameters: JSONValue?
    if let given = try cursor.optional("transformerParameters"), !given.isNull {
      _ = try given.members()
      parameters = try given.json()
    }
    return (enabled, parameters)
  }

  /// A proxied response: `proxyBaseUrl` (`given`) with the request headers it adds and removes.
  /// WireMock answers a proxied mapping from the upstream alone, so the members that shape an
  /// answer are refused beside it, and so are delays, which a proxied answer here cannot have.
  private static func proxy(_ given: JSONCursor, _ cursor: JSONCursor, keys: Set<String>)
    throws(MockBundleError) -> StubResponse
  {
    let text = try given.string()
    // A base URL holding `{{` is a template, rendered for each request when templating is on
    // (WireMock answers 500 for it otherwise, and so does the mock).
    guard text.contains("{{") || StubResponse.Proxy.isBaseURL(text) else {
      throw given.expected("an http or https URL without a query")
    }
    for key in [
      "body", "jsonBody", "base64Body", "bodyFileName", "fault", "status", "statusMessage",
      "headers",
    ] where keys.contains(key) {
      throw try cursor.required(key, "").fail(
        "is given with proxyBaseUrl, whose answer comes from the upstream as it is")
    }
    for key in ["fixedDelayMilliseconds", "delayDistribution", "chunkedDribbleDelay"]
    where keys.contains(key) {
      throw try cursor.required(key, "").fail(
        "with proxyBaseUrl is not supported: a proxied answer comes when the upstream answers",
        kind: .unsupported)
    }
    var added: [String: String] = [:]
    if let headers = try cursor.optional("additionalProxyRequestHeaders"), !headers.isNull {
      for member in try headers.members() {
        // Sent upstream as given: a line break here would be a header or request of its own.
        let value = headers.member(member.key, member.value)
        if let problem = HeaderFieldText.nameProblem(member.key) { throw value.fail(problem) }
        added[member.key] = try HeadCoding.headerValue(value, name: member.key)
      }
    }
    var removed: [String] = []
    if let names = try cursor.optional("removeProxyRequestHeaders"), !names.isNull {
      for element in try names.elements() { removed.append(try element.string()) }
    }
    return StubResponse(
      .proxy(
        StubResponse.Proxy(
          baseText: text, upstream: .own(StubResponse.OwnSession()), addedHeaders: added,
          removedHeaders: removed)))
  }
}
