import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The UI-test launch bridge: a bundle travels from a test process to the app it launches in
// the launch environment, and the app makes its mock from it.

extension MockBundle {
  /// The environment variable that carries a bundle in its value: one document of the
  /// bundle file format (`bundle.json`, version 1), bodies inline.
  public static let launchEnvironmentVariable = "HTTPSESSIONKIT_BUNDLE"

  /// The environment variable that carries the path of a file holding the bundle, for a
  /// bundle too large for ``launchEnvironmentVariable``.
  public static let launchEnvironmentFileVariable = "HTTPSESSIONKIT_BUNDLE_FILE"

  /// The largest value ``launchEnvironment()`` puts in a variable is one byte less (64 KiB);
  /// Linux allows about 128 KiB per string, and a launch environment holds other variables too.
  static let launchEnvironmentValueLimit = 65_536

  /// The environment variables that hand this bundle to a process you launch, such as the app
  /// under a UI test; the app makes its mock with ``URLSessionMock/init(launchEnvironment:clock:fileID:filePath:line:column:)``.
  ///
  /// The test side:
  ///
  /// ```swift
  /// var bundle = MockBundle()
  /// bundle.stub(.get("/users/{login}"), with: .json(user))
  /// let app = XCUIApplication()
  /// app.launchEnvironment.merge(try bundle.launchEnvironment()) { $1 }
  /// app.launch()
  /// ```
  ///
  /// The app side, early in launch:
  ///
  /// ```swift
  /// if let mock = try URLSessionMock(launchEnvironment: ProcessInfo.processInfo.environment) {
  ///   client.session = mock
  /// }
  /// ```
  ///
  /// The result always has both ``launchEnvironmentVariable`` and
  /// ``launchEnvironmentFileVariable``, one of them empty, so that merging it with `{ $1 }`
  /// replaces a bundle merged before. A bundle whose encoding is under 64 KiB travels in
  /// ``launchEnvironmentVariable``; a larger one is written to a file in the temporary
  /// directory (named after its content, so that launching again with the same bundle reuses
  /// it), and ``launchEnvironmentFileVariable`` carries the file's path. Every value is under
  /// 64 KiB.
  ///
  /// > Important: A large bundle reaches the app only if the app can read the test's temporary
  /// > directory: true for a process on the same machine, for the iOS Simulator and for macOS
  /// > apps, not for an app on a device. Keep bundles for a device under 64 KiB (bodies from
  /// > files count).
  ///
  /// The app never removes that file, because the same launch environment may launch it again
  /// (`app.terminate(); app.launch()`). The test removes it when it no longer launches with
  /// it, with ``removeLaunchEnvironmentFile(in:)``; a file left behind (one per distinct
  /// bundle, as files are named after their content) stays in the temporary directory until
  /// the system cleans it.
  ///
  /// - Throws: ``MockBundleError`` when a stub cannot be stored (a closure matcher or
  ///   response, an error that is not a `URLError`), or when the file cannot be written.
  public func launchEnvironment() throws -> [String: String] {
    let data = try encodedJSON()
    let text = String(decoding: data, as: UTF8.self)
    if text.utf8.count < Self.launchEnvironmentValueLimit {
      return [Self.launchEnvironmentVariable: text, Self.launchEnvironmentFileVariable: ""]
    }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "\(Self.launchFilePrefix)\(Self.contentName(data)).json")
    do {
      try data.write(to: file, options: .atomic)
    } catch {
      throw MockBundleError(
        .unreadable, source: file.path,
        "cannot write the bundle for the launch environment (\(error.localizedDescription))")
    }
    return [Self.launchEnvironmentVariable: "", Self.launchEnvironmentFileVariable: file.path]
  }

  /// Removes the file that ``launchEnvironment()`` wrote for a bundle over 64 KiB, named in
  /// `environment`; returns whether it removed one.
  ///
  /// ```swift
  /// let environment = try bundle.launchEnvironment()
  /// defer { MockBundle.removeLaunchEnvironmentFile(in: environment) }
  /// app.launchEnvironment.merge(environment) { $1 }
  /// app.launch()
  /// ```
  ///
  /// It removes only a file that ``launchEnvironment()`` writes: one in the temporary
  /// directory, named `HTTPSessionKit-bundle-<hash>.json`. Any other path, an empty variable
  /// or a file already gone leaves everything as it is and returns `false`.
  @discardableResult
  public static func removeLaunchEnvironmentFile(in environment: [String: String]) -> Bool {
    guard let path = environment[launchEnvironmentFileVariable], !path.isEmpty else {
      return false
    }
    let file = URL(fileURLWithPath: path).standardizedFileURL
    let folder = FileManager.default.temporaryDirectory.standardizedFileURL
    let name = file.lastPathComponent
    guard file.deletingLastPathComponent().path == folder.path,
      name.hasPrefix(launchFilePrefix), name.hasSuffix(".json"),
      name.utf8.count == launchFilePrefix.utf8.count + 16 + 5
    else { return false }
    return (try? FileManager.default.removeItem(at: file)) != nil
  }

  /// How the names of the files that ``launchEnvironment()`` writes begin.
  private static let launchFilePrefix = "HTTPSessionKit-bundle-"

  /// Reads the bundle that ``launchEnvironment()`` put in `environment`, or returns `nil` when
  /// it holds none (neither variable is set, or both are empty).
  ///
  /// ```swift
  /// if let bundle = try MockBundle(launchEnvironment: ProcessInfo.processInfo.environment) {
  ///   mock.use(bundle)
  /// }
  /// ```
  ///
  /// - Throws: ``MockBundleError`` whose ``MockBundleError/source`` names the variable (and
  ///   for ``launchEnvironmentFileVariable``, the file), with the place in the document and
  ///   what was expected: `HTTPSESSIONKIT_BUNDLE: entries[0].response.status: expected a
  ///   number, got "abc"`. It also throws when both variables are set, or the file cannot be
  ///   read.
  public init?(launchEnvironment environment: [String: String]) throws {
    let inline = environment[Self.launchEnvironmentVariable].flatMap { $0.isEmpty ? nil : $0 }
    let path = environment[Self.launchEnvironmentFileVariable].flatMap { $0.isEmpty ? nil : $0 }
    switch (inline, path) {
    case (nil, nil):
      return nil
    case (.some, .some):
      throw MockBundleError(
        .malformed, source: Self.launchEnvironmentVariable,
        "both \(Self.launchEnvironmentVariable) and \(Self.launchEnvironmentFileVariable) are "
          + "set, so which bundle was meant is unclear; launchEnvironment() sets one and "
          + "empties the other: merge its result into the launch environment with { $1 }")
    case (let text?, nil):
      try self.init(decodingJSON: Data(text.utf8), source: Self.launchEnvironmentVariable)
    case (nil, let path?):
      let source = "\(Self.launchEnvironmentFileVariable)=\(path)"
      guard path.hasPrefix("/") else {
        throw MockBundleError(
          .unreadable, source: source, "expected an absolute path to a bundle file")
      }
      let data: Data
      do {
        data = try Data(contentsOf: URL(fileURLWithPath: path))
      } catch {
        throw MockBundleError(
          .unreadable, source: source,
          "the bundle file cannot be read (\(error.localizedDescription)); is it on a "
            + "machine the app can read, and was it removed?")
      }
      try self.init(decodingJSON: data, source: source)
    }
  }

  /// A name for `data` that changes with its content: 64-bit FNV-1a, in hex.
  private static func contentName(_ data: Data) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in data {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }
}

extension URLSessionMock {
  /// Creates a mock from the bundle in a launch environment, or returns `nil` when the process
  /// was not launched with one: the app side of the UI-test launch bridge.
  ///
  /// Early in the app's launch:
  ///
  /// ```swift
  /// if let mock = try URLSessionMock(launchEnvironment: ProcessInfo.processInfo.environment) {
  ///   client.session = mock
  /// }
  /// ```
  ///
  /// and in the UI test, before `app.launch()`:
  /// `app.launchEnvironment.merge(try bundle.launchEnvironment()) { $1 }`. See
  /// ``MockBundle/launchEnvironment()`` for the variables. Unmatched requests are reported
  /// where this mock is created (on standard error in an app, which has no test).
  ///
  /// - Parameters:
  ///   - environment: The process's environment, usually `ProcessInfo.processInfo.environment`.
  ///   - clock: What the stubs' delays wait on; real time by default.
  ///   - fileID: Where the mock is made, for failure reports; leave the default.
  ///   - filePath: Where the mock is made, for failure reports; leave the default.
  ///   - line: Where the mock is made, for failure reports; leave the default.
  ///   - column: Where the mock is made, for failure reports; leave the default.
  /// - Throws: ``MockBundleError`` naming the variable when its value is not a bundle (see
  ///   ``MockBundle/init(launchEnvironment:)``).
  public convenience init?(
    launchEnvironment environment: [String: String], clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) throws {
    guard let bundle = try MockBundle(launchEnvironment: environment) else { return nil }
    self.init(
      bundle: bundle, clock: clock, fileID: fileID, filePath: filePath, line: line,
      column: column)
  }
}
