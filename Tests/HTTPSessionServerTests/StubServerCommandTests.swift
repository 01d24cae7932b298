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

/// The `stub-server` command, run as a child process on port 0, as a developer would run it.
@Suite struct StubServerCommandTests {
  static let stubServer = builtExecutable("stub-server")

  /// A fresh folder in the temporary directory.
  func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("stub-server-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  func start(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(try #require(Self.stubServer), arguments, environment: cleanEnvironment())
  }

  func get(_ url: URL, method: String = "GET") async throws -> (Data, HTTPURLResponse) {
    var request = URLRequest(url: url)
    request.httpMethod = method
    let (data, response) = try await liveSession().data(for: request)
    return (data, try #require(response as? HTTPURLResponse))
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func servesABundleFolderAndADirectoryLogsEachRequestAndStopsOnSIGTERM() async throws {
    let root = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: root) }
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
    bundle.stub(.post("/items"), with: .text("made", status: 201))
    let bundleFolder = root.appendingPathComponent("api", isDirectory: true)
    try bundle.write(to: bundleFolder)
    let site = root.appendingPathComponent("site", isDirectory: true)
    try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
    try Data("<h1>hello</h1>".utf8).write(to: site.appendingPathComponent("index.html"))
    try Data("console.log(1)".utf8).write(to: site.appendingPathComponent("app.js"))

    let server = try start([bundleFolder.path, "--port", "0", "--directory", site.path])
    defer { server.stop() }
    let first = try #require(server.nextLine(), "no first line; stderr: \(server.errorText)")
    #expect(first.hasPrefix("http://127.0.0.1:"), "\(first)")
    let base = try #require(URL(string: first))

    let (user, userResponse) = try await get(base.appendingPathComponent("users/octocat"))
    #expect(userResponse.statusCode == 200)
    #expect(try JSONDecoder().decode(User.self, from: user) == User(login: "octocat", id: 1))
    #expect(server.nextLine()?.hasPrefix("GET /users/octocat 200 ") == true)

    let (made, madeResponse) = try await get(base.appendingPathComponent("items"), method: "POST")
    #expect(madeResponse.statusCode == 201)
    #expect(text(made) == "made")
    #expect(server.nextLine()?.hasPrefix("POST /items 201 ") == true)

    let (page, pageResponse) = try await get(base.appendingPathComponent("index.html"))
    #expect(pageResponse.statusCode == 200)
    #expect(text(page) == "<h1>hello</h1>")
    let pageLine = try #require(server.nextLine())
    #expect(pageLine.hasPrefix("GET /index.html 200 GET or HEAD of files under /"), "\(pageLine)")
    #expect(!pageLine.contains("registered at"), "\(pageLine)")

    let (_, scriptResponse) = try await get(base.appendingPathComponent("app.js"))
    #expect(
      scriptResponse.value(forHTTPHeaderField: "Content-Type")?.contains("javascript") == true)
    #expect(server.nextLine()?.hasPrefix("GET /app.js 200 ") == true)

    // No stub takes a DELETE: the client gets 404 with the report, the log says why.
    let (report, missResponse) = try await get(
      base.appendingPathComponent("users/octocat"), method: "DELETE")
    #expect(missResponse.statusCode == 404)
    #expect(text(report).contains("No stub matches DELETE"))
    #expect(text(report).contains("The client received 404 Not Found, with this report"))
    #expect(!text(report).contains("URLError(.resourceUnavailable)"))
    let miss = try #require(server.nextLine())
    #expect(miss.hasPrefix("DELETE /users/octocat 404 unmatched; closest: "), "\(miss)")
    #expect(miss.contains("GET /users/{login}"), "\(miss)")
    #expect(miss.contains("method"), "\(miss)")

    server.send(SIGTERM)
    #expect(server.waitForExit() == 0, "stderr: \(server.errorText)")
    #expect(server.output.count == 6)
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func servesAMockingBirdBundleUnderItsOriginAndStopsOnSIGINT() async throws {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    // A MockingBird Mock-Bundle, recorded against the real host.
    try Data(
      #"""
      [ { "request": { "method": "GET", "url": "://api.github.com/users/hubot",
                       "parameters": { "tab": null } },
          "response": { "code": 200, "file": "hubot.json", "mime_type": "application/json" } } ]
      """#.utf8
    ).write(to: folder.appendingPathComponent("bundle.json"))
    try Data(#"{"login":"hubot","id":2}"#.utf8).write(
      to: folder.appendingPathComponent("hubot.json"))

    let server = try start([folder.path, "--origin", "https://api.github.com"])
    defer { server.stop() }
    let first = try #require(server.nextLine(), "no first line; stderr: \(server.errorText)")
    let base = try #require(URL(string: first))
    let url = try #require(URL(string: base.absoluteString + "/users/hubot?tab=repos"))
    let (data, response) = try await get(url)
    #expect(response.statusCode == 200)
    #expect(try JSONDecoder().decode(User.self, from: data) == User(login: "hubot", id: 2))
    #expect(server.nextLine()?.hasPrefix("GET /users/hubot?tab=repos 200 ") == true)

    server.send(SIGINT)
    #expect(server.waitForExit() == 0, "stderr: \(server.errorText)")
  }

  @Test(
    .enabled(
      if: stubServer != nil && builtExecutable("sample-app") != nil,
      "stub-server or sample-app was not found beside the test bundle; build them with swift build"
    ))
  func theExampleBundleServesTheSampleApp() throws {
    // Examples/github-api, from this file's place in the checkout.
    let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Examples/github-api", isDirectory: true)
    let server = try start([example.path])
    defer { server.stop() }
    let first = try #require(server.nextLine(), "no first line; stderr: \(server.errorText)")
    var environment = cleanEnvironment()
    environment["API_BASE_URL"] = first
    for (login, status, output) in [
      ("octocat", 0, ["octocat (id 583231)"]), ("ghost", 1, []),
    ] as [(String, Int32, [String])] {
      let app = try ChildProcess(
        try #require(builtExecutable("sample-app")), [login], environment: environment)
      #expect(app.waitForExit() == status, "\(login): \(app.errorText)")
      #expect(app.output == output)
    }
    #expect(server.nextLine() == "GET /users/octocat 200 bundle.json entry 1 (GET /users/{login})")
    #expect(server.nextLine() == "GET /users/ghost 404 bundle.json entry 2 (GET /users/ghost)")
    server.send(SIGTERM)
    #expect(server.waitForExit() == 0)
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func badArgumentsAndUnreadableBundlesExitWith2AndSayWhy() throws {
    let root = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: root) }
    let broken = root.appendingPathComponent("broken.json")
    try Data(#"{ "version": 1, "entries": [ { "request": 3 } ] }"#.utf8).write(to: broken)
    let cases: [(arguments: [String], message: String)] = [
      ([], "name a BUNDLE"),
      ([root.path, "--port", "abc"], "--port expects a number"),
      ([root.path, "--port"], "--port needs a value"),
      ([root.path, "--frobnicate"], "unknown option --frobnicate"),
      (["a", "b"], "one BUNDLE only"),
      ([root.appendingPathComponent("missing").path], "cannot read the bundle"),
      ([root.path], "bundle.json"),
      ([broken.path], "entries[0]"),
      ([broken.path, "--origin", "ftp://x"], "--origin expects"),
      (["--directory", root.appendingPathComponent("nowhere").path], "no such folder"),
      (["--directory", root.path, "--host", "192.0.2.1"], "cannot start the server"),
    ]
    for (arguments, message) in cases {
      let server = try start(arguments)
      #expect(server.waitForExit() == 2, "\(arguments)")
      #expect(server.output.isEmpty, "\(arguments)")
      #expect(server.errorText.contains(message), "\(arguments): \(server.errorText)")
    }
    let help = try start(["--help"])
    #expect(help.waitForExit() == 0)
    #expect(help.output.first?.hasPrefix("usage: stub-server BUNDLE") == true)
  }
}
