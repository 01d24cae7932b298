import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSessionMock {
  /// Serves the files of a WireMock root's `__files/` folder at their own paths to `GET`
  /// requests that no other stub matches, as WireMock does.
  ///
  /// WireMock answers a `GET` that no mapping matches with the file of the same path under
  /// `__files/`, when there is one: `GET /orders/7.json` gets `__files/orders/7.json`, and a
  /// folder its `index.html`. A folder of mappings that leans on this serves the same here:
  ///
  /// ```swift
  /// let root = URL(fileURLWithPath: "Fixtures/wiremock")  // mappings/ and __files/
  /// let mock = URLSessionMock(bundle: try MockBundle(contentsOf: root))
  /// mock.serveWireMockFiles(of: root)
  /// ```
  ///
  /// The stub has the lowest priority there is (`Int.max`), so every other stub wins, whatever
  /// its priority. It matches only a `GET` (WireMock's rule: not `HEAD`) of a path that names
  /// a file, or a folder with an `index.html`, when the request arrives; the query does not
  /// count. A request for a file that is not there is unmatched, and reported with its near
  /// misses. `stub-server` serves a WireMock root's files this way by itself.
  ///
  /// `Content-Type` follows the extension as WireMock 2.35.1's does (`text/plain` for `.txt`,
  /// `application/javascript` for `.js`, and `application/json` for an extension it does not
  /// know). It serves nothing outside `__files/`, refusing every way out that
  /// ``serveDirectory(_:at:fileID:filePath:line:column:)`` refuses.
  ///
  /// > Note: WireMock differs in two details: it answers a folder without `index.html`, and
  /// > the bare `/`, with `403` (here they are unmatched); and it also serves each file under
  /// > `/__files/`.
  ///
  /// - Parameters:
  ///   - root: The WireMock root: the folder that holds `mappings/` and `__files/`.
  ///   - fileID: Where the stub is registered, for failure reports; leave the default.
  ///   - filePath: Where the stub is registered, for failure reports; leave the default.
  ///   - line: Where the stub is registered, for failure reports; leave the default.
  ///   - column: Where the stub is registered, for failure reports; leave the default.
  /// - Returns: The stub, whose ``Stub/callCount`` counts the files served.
  @discardableResult
  public func serveWireMockFiles(
    of root: URL, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) -> Stub {
    let files = DirectoryFiles(
      root: root.appendingPathComponent("__files", isDirectory: true), prefix: "")
    let condition = WireMockStaticFile(files: files)
    return stub(
      RequestMatcher(.condition(condition), description: condition.description), fileID: fileID,
      filePath: filePath, line: line, column: column
    ) { request in
      guard let file = condition.file(for: request), let data = files.fileSystem.contents(file.path)
      else {
        // The file went between the match and the answer.
        return .text("Not found: \(request.url?.path ?? "")\n", status: 404)
      }
      return .data(data, headers: ["Content-Type": FileContentType.of(file, .wireMock)])
    }
    .priority(Int.max)
  }
}

/// WireMock's rule for its static files: a `GET` whose path names a file under `__files/`
/// (or a folder with an `index.html`) as the request arrives.
///
/// It looks at the file system, a few `realpath` and `stat` calls, under the router's lock;
/// it runs no user code. The router tries it last, as its stub has the lowest priority, so
/// only a request that nothing else matches pays for them.
struct WireMockStaticFile: RequestCondition {
  let files: DirectoryFiles

  var description: String { "GET of a file under \(files.root.path) (WireMock's static files)" }

  func compare(_ facts: RequestFacts, into result: inout RequestMatcher.Evaluation) {
    let method = facts.request.httpMethod ?? "GET"
    if method != "GET" {
      result.miss("method: expected GET (WireMock serves its files to GET alone), got \(method)")
    }
    if file(for: facts.request) == nil {
      result.miss("file: \(facts.rawPath) names no file under \(files.root.path)", weight: 2)
    }
  }

  /// The file `request` names, if there is one: a path that ends in `/` names a folder's
  /// `index.html` and never a file (`/notes.txt/` is none, as in WireMock).
  func file(for request: URLRequest) -> URL? {
    guard let relative = files.relativePath(of: request) else { return nil }
    return files.file(for: relative.hasSuffix("/") ? relative + "index.html" : relative)
  }

  func isEqual(to other: any RequestCondition) -> Bool {
    (other as? Self)?.files.root.standardizedFileURL == files.root.standardizedFileURL
  }
}
