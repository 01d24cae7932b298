import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

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

@Suite struct ServeDirectoryTests {
  /// A site folder inside a parent that also holds a secret file, which must never be served.
  struct Site {
    let parent: URL
    let root: URL
    let secretName: String

    init() throws {
      parent = try TemporaryFolder.scratch("serve")
      root = parent.appendingPathComponent("site", isDirectory: true)
      secretName = "secret.txt"
      let files = FileManager.default
      try files.createDirectory(
        at: root.appendingPathComponent("docs"), withIntermediateDirectories: true)
      try Data("top secret".utf8).write(to: parent.appendingPathComponent(secretName))
      try Data("<h1>home</h1>".utf8).write(to: root.appendingPathComponent("index.html"))
      try Data("<h1>docs</h1>".utf8).write(to: root.appendingPathComponent("docs/index.html"))
      try Data("body{}".utf8).write(to: root.appendingPathComponent("style.css"))
      try Data("a b".utf8).write(to: root.appendingPathComponent("with space.txt"))
      for name in [
        "a.js", "a.mjs", "a.json", "a.svg", "a.png", "a.jpg", "a.gif", "a.webp", "a.ico",
        "a.woff", "a.woff2", "a.wasm", "a.txt", "a.xml", "a.pdf", "a.bin",
      ] {
        try Data(name.utf8).write(to: root.appendingPathComponent(name))
      }
      try files.createSymbolicLink(
        at: root.appendingPathComponent("escape.txt"),
        withDestinationURL: parent.appendingPathComponent(secretName))
      try files.createSymbolicLink(
        at: root.appendingPathComponent("up"), withDestinationURL: parent)
      try files.createSymbolicLink(
        at: root.appendingPathComponent("inside.css"),
        withDestinationURL: root.appendingPathComponent("style.css"))
    }
  }

  private func get(
    _ mock: URLSessionMock, _ path: String, method: String = "GET"
  ) async throws -> (status: Int, body: String, type: String?) {
    let url = try #require(URL(string: "http://127.0.0.1:8080" + path))
    var request = URLRequest(url: url)
    request.httpMethod = method
    let (data, response) = try await mock.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    return (
      http.statusCode, String(decoding: data, as: UTF8.self),
      http.value(forHTTPHeaderField: "Content-Type")
    )
  }

  @Test func servesIndexHTMLForADirectory() async throws {
    let site = try Site()
    let mock = URLSessionMock()
    mock.serveDirectory(site.root)
    #expect(try await get(mock, "/").body == "<h1>home</h1>")
    #expect(try await get(mock, "/docs/").body == "<h1>docs</h1>")
    #expect(try await get(mock, "/docs").body == "<h1>docs</h1>")
    #expect(try await get(mock, "/").type == "text/html; charset=utf-8")
  }

  @Test func namesTheContentTypeByExtension() async throws {
    let site = try Site()
    let mock = URLSessionMock()
    mock.serveDirectory(site.root)
    let expected = [
      "a.js": "text/javascript; charset=utf-8", "a.mjs": "text/javascript; charset=utf-8",
      "a.json": "application/json", "a.svg": "image/svg+xml", "a.png": "image/png",
      "a.jpg": "image/jpeg", "a.gif": "image/gif", "a.webp": "image/webp",
      "a.ico": "image/x-icon", "a.woff": "font/woff", "a.woff2": "font/woff2",
      "a.wasm": "application/wasm", "a.txt": "text/plain; charset=utf-8",
      "a.xml": "application/xml", "a.pdf": "application/pdf",
      "a.bin": "application/octet-stream", "style.css": "text/css; charset=utf-8",
    ]
    for (name, type) in expected {
      let answer = try await get(mock, "/" + name)
      #expect(answer.type == type, "\(name)")
      #expect(answer.status == 200, "\(name)")
    }
  }

  @Test func servesPercentEncodedNamesAndSymlinksInsideTheRoot() async throws {
    let site = try Site()
    let mock = URLSessionMock()
    mock.serveDirectory(site.root)
    #expect(try await get(mock, "/with%20space.txt").body == "a b")
    #expect(try await get(mock, "/inside.css").body == "body{}")
  }

  @Test func answersHEADAndMissingFiles() async throws {
    let site = try Site()
    let mock = URLSessionMock()
    mock.serveDirectory(site.root)
    #expect(try await get(mock, "/style.css", method: "HEAD").status == 200)
    #expect(try await get(mock, "/nope.html").status == 404)
    #expect(try await get(mock, "/docs/nope/").status == 404)
  }

  @Test func servesUnderAPathPrefixOnly() async throws {
    let site = try Site()
    let mock = URLSessionMock()
    mock.serveDirectory(site.root, at: "/static/")
    mock.stub(.get("/api"), with: .text("api"))
    #expect(try await get(mock, "/static/style.css").body == "body{}")
    #expect(try await get(mock, "/static").body == "<h1>home</h1>")
    #expect(try await get(mock, "/api").body == "api")
    let outside = Shared<Bool?>(nil)
    await expectReport(containing: "No stub matches GET", "/staticstyle.css") {
      let answer = try? await get(mock, "/staticstyle.css")
      outside.withLock { $0 = answer != nil }
    }
    #expect(outside.current == false, "a path that only starts like the prefix is not served")
  }

  @Test(arguments: [
    ("a dot-dot segment", "/../SECRET"),
    ("a nested dot-dot", "/docs/../../SECRET"),
    ("percent-encoded dot-dot", "/%2e%2e/SECRET"),
    ("mixed-case encoded dot-dot", "/%2E%2e/SECRET"),
    ("an encoded slash", "/docs/..%2f..%2fSECRET"),
    ("an encoded backslash", "/..%5cSECRET"),
    ("a backslash", "/..\\SECRET"),
    ("a NUL byte", "/style.css%00.txt"),
    ("a dot segment", "/./style.css"),
    ("a symlink to a file outside", "/escape.txt"),
    ("a symlink to a folder outside", "/up/SECRET"),
  ])
  func neverServesAnythingOutsideTheRoot(_ attack: (String, String)) async throws {
    let site = try Site()
    let mock = URLSessionMock()
    mock.serveDirectory(site.root)
    let path = attack.1.replacingOccurrences(of: "SECRET", with: site.secretName)
    guard let url = URL(string: "http://127.0.0.1:8080" + path) else {
      // Foundation itself refuses the URL: nothing could be served.
      return
    }
    let (data, response) = try await mock.data(for: URLRequest(url: url))
    #expect((response as? HTTPURLResponse)?.statusCode == 404, "\(attack.0)")
    #expect(!String(decoding: data, as: UTF8.self).contains("top secret"), "\(attack.0)")
  }
  // MARK: - Long paths

  /// The live file system, counting the calls made through it.
  private func countingFileSystem(_ calls: Shared<[String]>) -> DirectoryFiles.FileSystem {
    let live = DirectoryFiles.FileSystem.live
    return DirectoryFiles.FileSystem(
      realPath: { path in
        calls.withLock { $0.append("realPath") }
        return live.realPath(path)
      },
      isDirectory: { path in
        calls.withLock { $0.append("isDirectory") }
        return live.isDirectory(path)
      },
      contents: { path in
        calls.withLock { $0.append("contents") }
        return live.contents(path)
      })
  }

  @Test func aPathLongerThanPathMaxGets404WithoutTouchingTheFileSystem() async throws {
    let site = try Site()
    let calls = Shared<[String]>([])
    let mock = URLSessionMock()
    mock.serveDirectory(site.root, fileSystem: countingFileSystem(calls))
    // 30,000 segments, 60 KB: refused while the path is read, before any file system call.
    let long = String(repeating: "/a", count: 30_000)
    #expect(try await get(mock, long).status == 404)
    #expect(calls.current == [])
    // Just over PATH_MAX in one segment, too.
    let segment = "/" + String(repeating: "b", count: Int(PATH_MAX))
    #expect(try await get(mock, segment).status == 404)
    #expect(calls.current == [])
  }

  @Test func aDeepPathUnderPathMaxIsServedWithOneLookUp() async throws {
    let site = try Site()
    // 1,000 nested folders: 2,000 bytes of path below the root.
    let relative = Array(repeating: "d", count: 1_000).joined(separator: "/")
    let folder = site.root.appendingPathComponent(relative, isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data("deep".utf8).write(to: folder.appendingPathComponent("f.txt"))
    let calls = Shared<[String]>([])
    let mock = URLSessionMock()
    mock.serveDirectory(site.root, fileSystem: countingFileSystem(calls))
    let answer = try await get(mock, "/" + relative + "/f.txt")
    #expect(answer.status == 200)
    #expect(answer.body == "deep")
    // The root, the file (joined once), whether it is a folder, its contents.
    #expect(calls.current == ["realPath", "realPath", "isDirectory", "contents"])
  }
}
