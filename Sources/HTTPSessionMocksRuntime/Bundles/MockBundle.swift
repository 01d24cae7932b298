import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An ordered list of declarative stubs that can be written to files, read back, and handed to
/// a mock.
///
/// ```swift
/// var bundle = MockBundle()
/// bundle.stub(.get("/users/{login}"), with: .json(user))
/// try bundle.write(to: folder)
/// let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
/// ```
///
/// A stub loaded from a file behaves exactly like the same stub written in code, with the same
/// precedence (a later entry wins over an earlier one that matches too). Only declarative stubs
/// (from the matcher and response factories) can be written to a file. Two bundles are equal
/// when they hold equal entries in the same order. <doc:BundleFileFormat> describes the formats
/// it reads and writes; <doc:RecordingAndReplaying>, HAR files and recordings.
public struct MockBundle: Sendable, Equatable {
  /// One stub of a bundle: what it matches, what it answers, its limits, and where it came
  /// from.
  ///
  /// ```swift
  /// let bundle = try MockBundle(contentsOf: folder)
  /// for entry in bundle.entries {
  ///   print(entry.origin, entry.matcher, entry.responses.count)
  /// }
  /// ```
  public struct Entry: Sendable, Equatable {
    /// What the entry matches.
    public internal(set) var matcher: RequestMatcher
    /// What it answers, in order; the last one repeats. Empty when ``hasResponseClosure``.
    public internal(set) var responses: [StubResponse]
    /// How many times it may answer; `nil` for no limit.
    public internal(set) var times: Int?
    /// The scenario state it answers in, if any.
    public internal(set) var whenState: String?
    /// The scenario state it moves to when it answers, if any.
    public internal(set) var willSetState: String?
    /// The named scenario that ``whenState`` and ``willSetState`` are about (WireMock's
    /// `scenarioName`); `nil` for the mock's default scenario, ``URLSessionMock/scenarioState``.
    public internal(set) var scenario: String? = nil
    /// Its priority, WireMock's: among the entries that match, the lowest number answers, then
    /// the newest; `nil` for the default, 5 (as in WireMock), which stubs written in code have.
    public internal(set) var priority: Int? = nil
    /// Where it came from, as reports name it: `bundle.json entry 3`, or the call site of
    /// `MockBundle.stub` (`MockBundle.stub at UserTests.swift:12`).
    public internal(set) var origin: String
    /// A response built by a closure: usable in this process, never stored in a file.
    var dynamic: DynamicResponse? = nil
    /// What was loaded but will not answer as the file's own tool would (see
    /// ``MockBundle/notes``): a WireMock mapping's `postServeActions`, a transformer this
    /// package does not have, a template that does not parse. A mock that loads the entry says
    /// each once, as a warning.
    package var notes: [String] = []

    /// Whether the entry builds its response with a closure (``MockBundle/stub(_:times:whenState:willSetState:fileID:filePath:line:column:respond:)``),
    /// which no file can store.
    public var hasResponseClosure: Bool { dynamic != nil }

    /// The stub's name in the reports of a mock that loaded it:
    /// `bundle.json entry 3 (GET ://httpbin.org/ip)`.
    var label: String { "\(origin) (\(matcher.description))" }

    /// Whether both entries match and answer alike; where they came from does not count.
    public static func == (lhs: Entry, rhs: Entry) -> Bool {
      lhs.matcher == rhs.matcher && lhs.responses == rhs.responses && lhs.times == rhs.times
        && lhs.whenState == rhs.whenState && lhs.willSetState == rhs.willSetState
        && lhs.scenario == rhs.scenario && lhs.priority == rhs.priority
        && lhs.dynamic === rhs.dynamic
    }
  }

  /// A closure that builds a response, kept in an object so that entries compare it by
  /// identity.
  final class DynamicResponse: Sendable {
    let respond: @Sendable (URLRequest, [String: String]) -> StubResponse

    init(_ respond: @escaping @Sendable (URLRequest, [String: String]) -> StubResponse) {
      self.respond = respond
    }
  }

  /// The stubs, in file order (or the order they were added).
  public internal(set) var entries: [Entry]
  /// Whether the first matching entry answers (MockingBird's rule) rather than the last (the
  /// rule of stubs written in code, of our format and of HAR files).
  public internal(set) var firstMatchWins: Bool

  /// An empty bundle.
  public init() {
    self.init(entries: [], firstMatchWins: false)
  }

  init(entries: [Entry], firstMatchWins: Bool) {
    self.entries = entries
    self.firstMatchWins = firstMatchWins
  }

  /// How many stubs the bundle holds.
  public var count: Int { entries.count }

  /// Whether two bundles hold equal entries in the same order, with the same precedence rule.
  public static func == (lhs: MockBundle, rhs: MockBundle) -> Bool {
    lhs.firstMatchWins == rhs.firstMatchWins && lhs.entries.count == rhs.entries.count
      && zip(lhs.entries, rhs.entries).allSatisfy(==)
  }

  // MARK: - Building

  /// Adds a stub that answers requests `matcher` accepts with `response`.
  ///
  /// `times`, `whenState` and `willSetState` do what ``Stub/times(_:)``,
  /// ``Stub/whenState(_:)`` and ``Stub/willSetState(_:)`` do for a stub in code:
  ///
  /// ```swift
  /// bundle.stub(.get("/me"), with: .status(401), whenState: "started")
  /// bundle.stub(.post("/login"), with: .status(200), times: 1, willSetState: "logged in")
  /// bundle.stub(.get("/me"), with: .json(me), whenState: "logged in")
  /// ```
  ///
  /// > Important: Only declarative stubs can be stored in a file. A closure matcher
  /// > (``RequestMatcher/init(_:_:)``), a response given as is
  /// > (``StubResponse/init(data:response:error:)``) or an error that is not a `URLError` is
  /// > reported as a test failure at this line; the stub is kept (a mock that loads the
  /// > bundle in this process uses it), and ``MockBundle/write(to:)`` throws an
  /// > error naming it and this line.
  public mutating func stub(
    _ matcher: RequestMatcher, with response: StubResponse, times: Int? = nil,
    whenState: String? = nil, willSetState: String? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    stub(
      matcher, with: [response], times: times, whenState: whenState, willSetState: willSetState,
      fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Adds a stub that answers requests `matcher` accepts with `responses` in turn; the last
  /// one repeats.
  ///
  /// ```swift
  /// bundle.stub(.get("/flaky"), with: [.error(URLError(.timedOut)), .status(503), .text("ok")])
  /// ```
  public mutating func stub(
    _ matcher: RequestMatcher, with responses: [StubResponse], times: Int? = nil,
    whenState: String? = nil, willSetState: String? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    append(
      Entry(
        matcher: matcher, responses: responses, times: times.map { max(0, $0) },
        whenState: whenState, willSetState: willSetState, origin: "MockBundle.stub at \(site)"),
      at: site)
  }

  /// Adds a stub whose response a closure builds for each request, from the request and the
  /// values of the pattern's `{name}` parameters.
  ///
  /// Such a stub works when the bundle is loaded into a mock in this process, but cannot be
  /// stored in a file: this call reports that as a test failure, and ``MockBundle/write(to:)`` throws.
  public mutating func stub(
    _ matcher: RequestMatcher, times: Int? = nil, whenState: String? = nil,
    willSetState: String? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
    respond: @escaping @Sendable (URLRequest, [String: String]) -> StubResponse
  ) {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    append(
      Entry(
        matcher: matcher, responses: [], times: times.map { max(0, $0) }, whenState: whenState,
        willSetState: willSetState, origin: "MockBundle.stub at \(site)",
        dynamic: DynamicResponse(respond)),
      at: site)
  }

  /// Adds `entry` as it is, such as a WireMock mapping's (``WireMockMapping/entry``).
  package mutating func append(_ entry: Entry) {
    entries.append(entry)
  }

  /// Adds `entry`, reporting at `site` what of it cannot be stored.
  private mutating func append(_ entry: Entry, at site: CallSite) {
    entries.append(entry)
    // What the writer would refuse, found by writing the entry; fixture files are not read
    // here (a missing one is reported where it is used, as in code).
    var probed = entry
    probed.responses = entry.responses.map { response in
      if case .http(.file, _, _) = response.content { return .status(200) }
      return response
    }
    var probe = BundleFormat.Writer(intoFolder: true)
    let single = MockBundle(entries: [probed], firstMatchWins: false)
    do {
      _ = try probe.document(single)
    } catch {
      guard error.kind == .unstorable else { return }
      FailureReporter().fail(
        "\(error.problem.prefix(1).uppercased())\(error.problem.dropFirst()). The stub is kept "
          + "and works in a mock this test loads the bundle into, but write(to:) will throw.",
        at: site)
    }
  }

  // MARK: - Reading

  /// Loads a bundle: `url` is a folder holding `bundle.json`, a WireMock root folder (one
  /// holding `mappings/`), or a `.json` or `.har` file.
  ///
  /// The format is chosen by content, not by name: a JSON object with `"log"` is a HAR file, an
  /// object with `"version"` is our format (see <doc:BundleFileFormat>), an object with
  /// `"request"` and `"response"` (one mapping) or `"mappings"` is WireMock's (see
  /// <doc:WireMockFormat>), and an array is MockingBird's Mock-Bundle format. Body files that entries name are read now, relative to
  /// the folder (the file's folder for a file); a missing one, or one outside the folder
  /// (`../../etc/passwd`, an absolute path, a symbolic link out), throws.
  ///
  /// Every problem throws a ``MockBundleError`` that names the file, the place in it and what
  /// was expected; nothing is loaded in part.
  public init(contentsOf url: URL) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
      throw MockBundleError(
        .unreadable, source: url.path, "no such file or folder")
    }
    let file = isDirectory.boolValue ? url.appendingPathComponent("bundle.json") : url
    if isDirectory.boolValue, WireMockFormat.isRoot(url),
      !FileManager.default.fileExists(atPath: file.path)
    {
      self = try WireMockFormat.read(root: url)
      return
    }
    let folder = file.deletingLastPathComponent()
    var data: Data
    do {
      data = try Data(contentsOf: file)
    } catch {
      throw MockBundleError(
        .unreadable, source: file.path,
        isDirectory.boolValue
          ? "the folder has no readable bundle.json (\(error.localizedDescription))"
          : "cannot be read (\(error.localizedDescription))")
    }
    let name = file.lastPathComponent
    data = JSONText.utf8(data)  // a UTF-16 or UTF-32 file is sniffed as its text
    switch JSONShape(sniffing: data) {
    case .object(let keys) where keys.contains("log"):
      // Consumed: a large recording's bytes are let go before its stubs are built.
      self = try HARFormat.read(consume data, source: file.path, name: name)
    case .object(let keys) where keys.contains("version"):
      self = try BundleFormat.read(data, folder: folder, source: file.path, name: name)
    case .object(let keys) where WireMockFormat.recognises(keys):
      self = try WireMockFormat.read(data, file: file)
    case .array:
      self = try MockingBirdFormat.read(data, folder: folder, source: file.path, name: name)
    case .object:
      // Our reader names what is missing.
      self = try BundleFormat.read(data, folder: folder, source: file.path, name: name)
    case .other:
      _ = try JSONCursor.parse(data, source: file.path, duplicates: .lastWins)
      throw MockBundleError(
        .malformed, source: file.path,
        "expected a JSON object with \"version\" (a bundle.json), an object with \"log\" (a HAR "
          + "file) or an array (a MockingBird bundle.json)")
    }
  }

  /// Reads one self-contained document of our format (bodies inline); `source` names it in
  /// errors.
  package init(decodingJSON data: Data, source: String) throws {
    self = try BundleFormat.read(data, folder: nil, source: source, name: source)
  }

  // MARK: - Writing

  /// Writes the bundle in our format (see <doc:BundleFileFormat>).
  ///
  /// When `url` is a folder (one that exists, or a path with no extension), it gets
  /// `bundle.json` and, beside it, a file for each binary body and each body that was read from
  /// a file; otherwise `url` is one JSON file with every body inline (binary as base64).
  ///
  /// Throws a ``MockBundleError`` naming the first stub that cannot be stored (a closure
  /// matcher or response, an error that is not a `URLError`) and where it was registered.
  public func write(to url: URL) throws {
    var isDirectory: ObjCBool = false
    let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
    let asFolder = exists ? isDirectory.boolValue : url.pathExtension.isEmpty
    var writer = BundleFormat.Writer(intoFolder: asFolder)
    let document = JSONWriter.pretty(try writer.document(self))
    guard asFolder else {
      try document.write(to: url, options: .atomic)
      return
    }
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    for (path, data) in writer.files.sorted(by: { $0.key < $1.key }) {
      let target = url.appendingPathComponent(path)
      try FileManager.default.createDirectory(
        at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
      try data.write(to: target, options: .atomic)
    }
    try document.write(to: url.appendingPathComponent("bundle.json"), options: .atomic)
  }

  /// Writes the bundle in `format`: ``FileFormat/bundle`` as ``write(to:)`` does, or
  /// ``FileFormat/wireMock`` as a WireMock root folder.
  ///
  /// A WireMock root gets `mappings/NNN-name.json`, one mapping a file in precedence order, and
  /// `__files/` for bodies that were read from files or are not text:
  ///
  /// ```swift
  /// try bundle.write(to: folder, format: .wireMock)
  /// // java -jar wiremock-standalone.jar --root-dir folder serves the same stubs
  /// ```
  ///
  /// A stub with a list of responses or a ``Stub/times(_:)`` limit becomes a scenario chain of
  /// mappings. Throws a ``MockBundleError`` naming the first stub WireMock cannot express: a
  /// closure matcher or response, `||` or `!`, a URL regex or an absolute URL pattern, an error
  /// that is not a WireMock fault, or a list or limit on a stub with scenario states of its own.
  public func write(to url: URL, format: FileFormat) throws {
    switch format {
    case .bundle:
      try write(to: url)
    case .wireMock:
      var writer = WireMockFormat.Writer(intoFolder: true)
      let mappings = try writer.mappings(self)
      let folder = url.appendingPathComponent("mappings", isDirectory: true)
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      for (name, json) in mappings {
        try JSONWriter.pretty(json).write(to: folder.appendingPathComponent(name), options: .atomic)
      }
      let files = url.appendingPathComponent("__files", isDirectory: true)
      for (path, data) in writer.files.sorted(by: { $0.key < $1.key }) {
        let target = files.appendingPathComponent(path)
        try FileManager.default.createDirectory(
          at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: target, options: .atomic)
      }
    }
  }

  /// The bundle as one self-contained document of our format, bodies inline.
  package func encodedJSON() throws -> Data {
    var writer = BundleFormat.Writer(intoFolder: false)
    return JSONWriter.pretty(try writer.document(self))
  }

  /// The bundle as a HAR 1.2 document.
  public func harData() throws -> Data {
    try HARFormat.write(self)
  }
}
