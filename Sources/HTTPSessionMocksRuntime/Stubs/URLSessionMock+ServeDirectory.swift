import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension URLSessionMock {
  /// Serves the files under `root` for GET and HEAD requests whose path is under `path`, like
  /// Swifter's `shareFilesFromDirectory`: a page, its scripts and styles for a WebView test.
  ///
  /// ```swift
  /// mock.serveDirectory(Bundle.module.url(forResource: "Site", withExtension: nil)!)
  /// mock.stub(.get("/api/profile"), with: .json(profile))
  /// let server = try mock.startServer()
  /// webView.load(URLRequest(url: server.baseURL))  // index.html, then its fetch() calls
  /// ```
  ///
  /// It is an ordinary stub, so every door serves it (the injected mock, the loopback server)
  /// and the journal records every file request. A directory answers with its `index.html`;
  /// `Content-Type` follows the extension (html, css, js, mjs, json, svg, png, jpg, gif, webp,
  /// ico, woff, woff2, wasm, txt, xml, pdf; `application/octet-stream` otherwise); a missing
  /// file gets `404`.
  ///
  /// > Important: It never serves anything outside `root`. A path with a `..` or `.` segment
  /// > (also percent-encoded, `%2e%2e`), an encoded slash (`%2f`), a backslash, a NUL byte, or
  /// > a symbolic link that resolves outside `root` gets `404`. So does a path longer than the
  /// > platform's `PATH_MAX` (4,096 bytes on Linux, 1,024 on Apple platforms), at once and
  /// > without touching the file system.
  ///
  /// - Parameters:
  ///   - root: The folder to serve.
  ///   - path: The URL path the folder appears at; `/` (the default) serves it at the top.
  ///   - fileID: Where the stub is registered, for failure reports; leave the default.
  ///   - filePath: Where the stub is registered, for failure reports; leave the default.
  ///   - line: Where the stub is registered, for failure reports; leave the default.
  ///   - column: Where the stub is registered, for failure reports; leave the default.
  /// - Returns: The stub, whose ``Stub/callCount`` counts the files served.
  @discardableResult
  public func serveDirectory(
    _ root: URL, at path: String = "/", fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Stub {
    serveDirectory(
      root, at: path, fileSystem: .live, fileID: fileID, filePath: filePath, line: line,
      column: column)
  }

  /// ``serveDirectory(_:at:fileID:filePath:line:column:)`` through `fileSystem`, so that a
  /// test can see which calls a request makes.
  @discardableResult
  package func serveDirectory(
    _ root: URL, at path: String = "/", fileSystem: DirectoryFiles.FileSystem,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Stub {
    let prefix = DirectoryFiles.normalizedPrefix(path)
    let files = DirectoryFiles(root: root, prefix: prefix, fileSystem: fileSystem)
    let matcher = RequestMatcher(
      "GET or HEAD of files under \(prefix.isEmpty ? "/" : prefix) from \(root.path)"
    ) {
      request in
      let method = request.httpMethod ?? "GET"
      guard method == "GET" || method == "HEAD" else { return false }
      return files.relativePath(of: request) != nil
    }
    return stub(matcher, fileID: fileID, filePath: filePath, line: line, column: column) {
      request in files.response(for: request)
    }
  }
}

/// Maps request paths to files under a root folder, refusing every way out of it.
package struct DirectoryFiles: Sendable {
  /// The file system calls that serving a directory makes, in one place, so that a test can
  /// count them.
  package struct FileSystem: Sendable {
    /// The path with every symbolic link resolved, or `nil` if it does not exist.
    package var realPath: @Sendable (String) -> String?
    /// Whether the path names a directory; `nil` if it names nothing.
    package var isDirectory: @Sendable (String) -> Bool?
    /// The contents of the file at the path, or `nil` if it cannot be read.
    package var contents: @Sendable (String) -> Data?

    package init(
      realPath: @escaping @Sendable (String) -> String?,
      isDirectory: @escaping @Sendable (String) -> Bool?,
      contents: @escaping @Sendable (String) -> Data?
    ) {
      self.realPath = realPath
      self.isDirectory = isDirectory
      self.contents = contents
    }

    /// The real file system.
    package static let live = FileSystem(
      realPath: { path in
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
      },
      isDirectory: { path in
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
          return nil
        }
        return isDirectory.boolValue
      },
      contents: { path in try? Data(contentsOf: URL(fileURLWithPath: path)) })
  }

  /// The longest path the file system takes (`PATH_MAX`, with its terminating NUL).
  static let maximumPathBytes = Int(PATH_MAX)

  let root: URL
  /// The URL path the folder is served at, without a trailing slash (`""` for the top).
  let prefix: String
  let fileSystem: FileSystem

  init(root: URL, prefix: String, fileSystem: FileSystem = .live) {
    self.root = root
    self.prefix = prefix
    self.fileSystem = fileSystem
  }

  static func normalizedPrefix(_ path: String) -> String {
    var prefix = path.hasPrefix("/") ? path : "/" + path
    while prefix.hasSuffix("/") { prefix.removeLast() }
    return prefix
  }

  /// The percent-encoded path below the prefix (`""` or starting with `/`), or `nil` when the
  /// request's path is not under it.
  func relativePath(of request: URLRequest) -> String? {
    guard let url = request.url,
      let encoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath
    else { return nil }
    let path = encoded.isEmpty ? "/" : encoded
    guard path.hasPrefix(prefix) else { return nil }
    let rest = String(path.dropFirst(prefix.count))
    guard rest.isEmpty || rest.hasPrefix("/") else { return nil }
    return rest
  }

  func response(for request: URLRequest) -> StubResponse {
    guard let rest = relativePath(of: request), let file = file(for: rest) else {
      return notFound(request)
    }
    guard let data = fileSystem.contents(file.path) else { return notFound(request) }
    return .data(data, headers: ["Content-Type": FileContentType.of(file, .browser)])
  }

  private func notFound(_ request: URLRequest) -> StubResponse {
    .text("Not found: \(request.url?.path ?? "")\n", status: 404)
  }

  /// The regular file a relative path names, or `nil` if it does not exist or is refused.
  ///
  /// The path is decoded and checked segment by segment, refused as soon as it grows past
  /// `PATH_MAX` (before any file system call), and joined once.
  func file(for relative: String) -> URL? {
    var segments: [String] = []
    var length = 0
    for raw in relative.split(separator: "/", omittingEmptySubsequences: true) {
      guard !raw.contains("\\"), let decoded = raw.removingPercentEncoding else { return nil }
      guard decoded != ".", decoded != "..", !decoded.contains("/"), !decoded.contains("\\"),
        !decoded.contains("\0")
      else { return nil }
      length += decoded.utf8.count + 1
      guard length < Self.maximumPathBytes else { return nil }
      segments.append(decoded)
    }
    guard let base = fileSystem.realPath(root.path) else { return nil }
    let joined = segments.joined(separator: "/")
    let candidate = joined.isEmpty ? base : (base.hasSuffix("/") ? base : base + "/") + joined
    guard candidate.utf8.count < Self.maximumPathBytes,
      var resolved = fileSystem.realPath(candidate), Self.isInside(resolved, base),
      let isDirectory = fileSystem.isDirectory(resolved)
    else { return nil }
    if isDirectory {
      guard let index = fileSystem.realPath(resolved + "/index.html"), Self.isInside(index, base)
      else { return nil }
      resolved = index
      guard fileSystem.isDirectory(resolved) == false else { return nil }
    }
    return URL(fileURLWithPath: resolved)
  }

  private static func isInside(_ path: String, _ base: String) -> Bool {
    path == base || path.hasPrefix(base.hasSuffix("/") ? base : base + "/")
  }
}
