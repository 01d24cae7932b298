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
  /// > a symbolic link that resolves outside `root` gets `404`.
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
    let prefix = DirectoryFiles.normalizedPrefix(path)
    let files = DirectoryFiles(root: root, prefix: prefix)
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
struct DirectoryFiles: Sendable {
  let root: URL
  /// The URL path the folder is served at, without a trailing slash (`""` for the top).
  let prefix: String

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
    guard let data = try? Data(contentsOf: file) else { return notFound(request) }
    return .data(data, headers: ["Content-Type": Self.contentType(of: file)])
  }

  private func notFound(_ request: URLRequest) -> StubResponse {
    .text("Not found: \(request.url?.path ?? "")\n", status: 404)
  }

  /// The regular file a relative path names, or `nil` if it does not exist or is refused.
  func file(for relative: String) -> URL? {
    var segments: [String] = []
    for raw in relative.split(separator: "/", omittingEmptySubsequences: true) {
      guard !raw.contains("\\"), let decoded = raw.removingPercentEncoding else { return nil }
      guard decoded != ".", decoded != "..", !decoded.contains("/"), !decoded.contains("\\"),
        !decoded.contains("\0")
      else { return nil }
      segments.append(decoded)
    }
    guard let base = Self.realPath(root.path) else { return nil }
    var candidate = URL(fileURLWithPath: base, isDirectory: true)
    for segment in segments { candidate.appendPathComponent(segment) }
    guard var resolved = Self.realPath(candidate.path), Self.isInside(resolved, base) else {
      return nil
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) else {
      return nil
    }
    if isDirectory.boolValue {
      guard let index = Self.realPath(resolved + "/index.html"), Self.isInside(index, base) else {
        return nil
      }
      resolved = index
      guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory),
        !isDirectory.boolValue
      else { return nil }
    }
    return URL(fileURLWithPath: resolved)
  }

  private static func isInside(_ path: String, _ base: String) -> Bool {
    path == base || path.hasPrefix(base.hasSuffix("/") ? base : base + "/")
  }

  /// The path with every symbolic link resolved, or `nil` if it does not exist.
  private static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  static func contentType(of file: URL) -> String {
    switch file.pathExtension.lowercased() {
    case "html", "htm": "text/html; charset=utf-8"
    case "css": "text/css; charset=utf-8"
    case "js", "mjs": "text/javascript; charset=utf-8"
    case "json": "application/json"
    case "svg": "image/svg+xml"
    case "png": "image/png"
    case "jpg", "jpeg": "image/jpeg"
    case "gif": "image/gif"
    case "webp": "image/webp"
    case "ico": "image/x-icon"
    case "woff": "font/woff"
    case "woff2": "font/woff2"
    case "wasm": "application/wasm"
    case "txt": "text/plain; charset=utf-8"
    case "xml": "application/xml"
    case "pdf": "application/pdf"
    default: "application/octet-stream"
    }
  }
}
