import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
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
/// Every one is started with `--exit-with-parent`, so that none outlives the test process.
@Suite struct StubServerCommandTests {
  static let stubServer = builtExecutable("stub-server")

  func start(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(
      try #require(Self.stubServer), ["--exit-with-parent"] + arguments,
      environment: cleanEnvironment())
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
  func theLogNamesTheStubThatAnsweredEvenWhenTheJournalKeepsNothing() async throws {
    let temporary = try TemporaryFolder("stub-server")
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
    let bundleFolder = temporary.url.appendingPathComponent("api", isDirectory: true)
    try bundle.write(to: bundleFolder)

    let server = try start([bundleFolder.path, "--port", "0", "--journal", "0"])
    defer { server.stop() }
    let first = try #require(await server.line(), "no first line; stderr: \(server.errorText)")
    let base = try #require(URL(string: first))
    for _ in 0..<2 {
      let (_, response) = try await get(base.appendingPathComponent("users/octocat"))
      #expect(response.statusCode == 200)
      let line = try #require(await server.line())
      #expect(line == "GET /users/octocat 200 bundle.json entry 1 (GET /users/{login})", "\(line)")
    }
    server.send(SIGTERM)
    #expect(await server.exit() == 0, "stderr: \(server.errorText)")
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func servesABundleFolderAndADirectoryLogsEachRequestAndStopsOnSIGTERM() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let root = temporary.url
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
    let first = try #require(await server.line(), "no first line; stderr: \(server.errorText)")
    #expect(first.hasPrefix("http://127.0.0.1:"), "\(first)")
    let base = try #require(URL(string: first))

    let (user, userResponse) = try await get(base.appendingPathComponent("users/octocat"))
    #expect(userResponse.statusCode == 200)
    #expect(try JSONDecoder().decode(User.self, from: user) == User(login: "octocat", id: 1))
    #expect(await server.line()?.hasPrefix("GET /users/octocat 200 ") == true)

    let (made, madeResponse) = try await get(base.appendingPathComponent("items"), method: "POST")
    #expect(madeResponse.statusCode == 201)
    #expect(text(made) == "made")
    #expect(await server.line()?.hasPrefix("POST /items 201 ") == true)

    let (page, pageResponse) = try await get(base.appendingPathComponent("index.html"))
    #expect(pageResponse.statusCode == 200)
    #expect(text(page) == "<h1>hello</h1>")
    let pageLine = try #require(await server.line())
    #expect(pageLine.hasPrefix("GET /index.html 200 GET or HEAD of files under /"), "\(pageLine)")
    #expect(!pageLine.contains("registered at"), "\(pageLine)")

    let (_, scriptResponse) = try await get(base.appendingPathComponent("app.js"))
    #expect(
      scriptResponse.value(forHTTPHeaderField: "Content-Type")?.contains("javascript") == true)
    #expect(await server.line()?.hasPrefix("GET /app.js 200 ") == true)

    // No stub takes a DELETE: the client gets 404 with the report, the log says why.
    let (report, missResponse) = try await get(
      base.appendingPathComponent("users/octocat"), method: "DELETE")
    #expect(missResponse.statusCode == 404)
    #expect(text(report).contains("No stub matches DELETE"))
    #expect(text(report).contains("The client received 404 Not Found, with this report"))
    #expect(!text(report).contains("URLError(.resourceUnavailable)"))
    let miss = try #require(await server.line())
    #expect(miss.hasPrefix("DELETE /users/octocat 404 unmatched; closest: "), "\(miss)")
    #expect(miss.contains("GET /users/{login}"), "\(miss)")
    #expect(miss.contains("method"), "\(miss)")

    server.send(SIGTERM)
    #expect(await server.exit() == 0, "stderr: \(server.errorText)")
    #expect(server.output.count == 6)
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func servesAMockingBirdBundleUnderItsOriginAndStopsOnSIGINT() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let folder = temporary.url
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
    let first = try #require(await server.line(), "no first line; stderr: \(server.errorText)")
    let base = try #require(URL(string: first))
    let url = try #require(URL(string: base.absoluteString + "/users/hubot?tab=repos"))
    let (data, response) = try await get(url)
    #expect(response.statusCode == 200)
    #expect(try JSONDecoder().decode(User.self, from: data) == User(login: "hubot", id: 2))
    #expect(await server.line()?.hasPrefix("GET /users/hubot?tab=repos 200 ") == true)

    server.send(SIGINT)
    #expect(await server.exit() == 0, "stderr: \(server.errorText)")
  }

  @Test(
    .enabled(
      if: stubServer != nil && builtExecutable("sample-app") != nil,
      "stub-server or sample-app was not found beside the test bundle; build them with swift build"
    ))
  func theExampleBundleServesTheSampleApp() async throws {
    // Examples/github-api, from this file's place in the checkout.
    let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Examples/github-api", isDirectory: true)
    let server = try start([example.path])
    defer { server.stop() }
    let first = try #require(await server.line(), "no first line; stderr: \(server.errorText)")
    var environment = cleanEnvironment()
    environment["API_BASE_URL"] = first
    for (login, status, output) in [
      ("octocat", 0, ["octocat (id 583231)"]), ("ghost", 1, []),
    ] as [(String, Int32, [String])] {
      let app = try ChildProcess(
        try #require(builtExecutable("sample-app")), [login], environment: environment)
      #expect(await app.exit() == status, "\(login): \(app.errorText)")
      #expect(app.output == output)
    }
    #expect(
      await server.line() == "GET /users/octocat 200 bundle.json entry 1 (GET /users/{login})")
    #expect(await server.line() == "GET /users/ghost 404 bundle.json entry 2 (GET /users/ghost)")
    server.send(SIGTERM)
    #expect(await server.exit() == 0)
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func badArgumentsAndUnreadableBundlesExitWith2AndSayWhy() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let root = temporary.url
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
      (["--root-dir", root.appendingPathComponent("nowhere").path], "no such folder"),
      (
        ["--root-dir", root.appendingPathComponent("nowhere").path, "--no-admin"], "no such folder"
      ),
      (["--directory", root.path, "--host", "192.0.2.1"], "cannot start the server"),
    ]
    for (arguments, message) in cases {
      let server = try start(arguments)
      #expect(await server.exit() == 2, "\(arguments)")
      #expect(server.output.isEmpty, "\(arguments)")
      #expect(server.errorText.contains(message), "\(arguments): \(server.errorText)")
    }
    let help = try start(["--help"])
    #expect(await help.exit() == 0)
    #expect(help.output.first?.hasPrefix("usage: stub-server BUNDLE") == true)
  }

  // MARK: - Messages for a command-line user

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func reportsNameTheBundleEntryAndTheFlagsNotTheToolsSourceLines() async throws {
    let temporary = try TemporaryFolder("stub-server")
    var bundle = MockBundle()
    bundle.stub(
      .get("/users/{login}"),
      with: .json(User(login: "octocat", id: 1)).delayed(by: .milliseconds(20)))
    bundle.stub(.post("/items"), with: .status(201))
    let folder = temporary.appendingPathComponent("api", isDirectory: true)
    try bundle.write(to: folder)
    let server = try start([folder.path])
    defer { server.stop() }
    let base = try #require(await server.line().flatMap(URL.init(string:)), "\(server.errorText)")

    // The delay runs on a real clock, and the command does not warn that it has none.
    let (user, userResponse) = try await get(base.appendingPathComponent("users/octocat"))
    #expect(userResponse.statusCode == 200)
    #expect(try JSONDecoder().decode(User.self, from: user) == User(login: "octocat", id: 1))
    #expect(
      await server.line() == "GET /users/octocat 200 bundle.json entry 1 (GET /users/{login})")

    let (body, missResponse) = try await get(
      base.appendingPathComponent("users/octocat"), method: "DELETE")
    #expect(missResponse.statusCode == 404)
    let report = text(body)
    let line = try #require(await server.line())
    server.closeInput()
    #expect(await server.exit() == 0)
    let errors = server.errorText
    for (name, message) in [("the 404 body", report), ("standard error", errors)] {
      #expect(message.contains("No stub matches DELETE"), "\(name): \(message)")
      #expect(
        message.contains("1. bundle.json entry 1 (GET /users/{login})\n"), "\(name): \(message)")
      #expect(message.contains("add or change an entry in \(folder.path)"), "\(name): \(message)")
      #expect(message.contains("--unmatched 404"), "\(name): \(message)")
      #expect(message.contains("--unmatched passthrough URL"), "\(name): \(message)")
      for code in ["main.swift", "registered at", "unmatchedRequestPolicy", "mock."] {
        #expect(!message.contains(code), "\(name) cites \(code): \(message)")
      }
    }
    #expect(errors.hasPrefix("stub-server: error: No stub matches DELETE"), "\(errors)")
    #expect(!errors.contains("warning"), "\(errors)")
    #expect(!errors.contains("clock"), "\(errors)")
    #expect(!line.contains("registered at"), "\(line)")
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func anEmptyRecordingSaysItHasNoEntries() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let recording = temporary.appendingPathComponent("empty.har")
    try MockBundle().harData().write(to: recording)
    let server = try start([recording.path])
    defer { server.stop() }
    let base = try #require(await server.line().flatMap(URL.init(string:)), "\(server.errorText)")
    let (body, response) = try await get(base.appendingPathComponent("users/octocat"))
    #expect(response.statusCode == 404)
    let line = try #require(await server.line())
    server.closeInput()
    #expect(await server.exit() == 0)
    // "The recording ..." in the report, "the recording ..." in the log line.
    for message in [text(body), server.errorText, line] {
      #expect(message.contains("he recording \(recording.path) has no entries"), "\(message)")
      #expect(!message.contains("mock"), "\(message)")
    }
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func unmatched404AnswersAPlain404WithoutAReport() async throws {
    let temporary = try TemporaryFolder("stub-server")
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .status(200))
    let file = temporary.appendingPathComponent("bundle.json")
    try bundle.write(to: file)
    let server = try start([file.path, "--unmatched", "404"])
    defer { server.stop() }
    let base = try #require(await server.line().flatMap(URL.init(string:)), "\(server.errorText)")
    let (body, response) = try await get(base.appendingPathComponent("nope"))
    #expect(response.statusCode == 404)
    #expect(body.isEmpty, "\(text(body))")
    #expect(await server.line() == "GET /nope 404 unmatched (--unmatched 404)")
    server.closeInput()
    #expect(await server.exit() == 0)
    #expect(server.errorText.isEmpty, "\(server.errorText)")
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func unmatchedPassthroughForwardsToTheUpstreamServer() async throws {
    // The upstream: a server of this test's own, answering from a mock.
    let upstream = URLSessionMock()
    upstream.stub(.get("/users/hubot"), with: .json(User(login: "hubot", id: 2)))
    let upstreamServer = try upstream.startServer()
    defer { upstreamServer.stop() }
    let temporary = try TemporaryFolder("stub-server")
    var bundle = MockBundle()
    bundle.stub(.get("/users/octocat"), with: .json(User(login: "octocat", id: 1)))
    let file = temporary.appendingPathComponent("bundle.json")
    try bundle.write(to: file)
    let upstreamURL = upstreamServer.baseURL.absoluteString
    let server = try start([file.path, "--unmatched", "passthrough", upstreamURL])
    defer { server.stop() }
    let base = try #require(await server.line().flatMap(URL.init(string:)), "\(server.errorText)")

    let (own, _) = try await get(base.appendingPathComponent("users/octocat"))
    #expect(try JSONDecoder().decode(User.self, from: own) == User(login: "octocat", id: 1))
    let (forwarded, response) = try await get(
      try #require(URL(string: base.absoluteString + "/users/hubot?page=2")))
    #expect(response.statusCode == 200)
    #expect(try JSONDecoder().decode(User.self, from: forwarded) == User(login: "hubot", id: 2))
    #expect(await server.line()?.hasPrefix("GET /users/octocat 200 ") == true)
    #expect(
      await server.line()
        == "GET /users/hubot?page=2 200 unmatched (passed through to \(upstreamURL))")
    let sent = try #require(upstream.requests.first)
    #expect(sent.url?.absoluteString == upstreamURL + "/users/hubot?page=2")
    #expect(
      sent.value(forHTTPHeaderField: "Host")
        == upstreamServer.baseURL.host.map { "\($0):\(upstreamServer.port)" })
    server.closeInput()
    #expect(await server.exit() == 0)
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func aPortInUseSuggestsPort0AndBadUnmatchedValuesExitWith2() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let first = try start(["--directory", temporary.url.path])
    defer { first.stop() }
    let base = try #require(await first.line().flatMap(URL.init(string:)), "\(first.errorText)")
    let port = try #require(base.port)
    let cases: [(arguments: [String], message: String)] = [
      (["--directory", temporary.url.path, "--port", "\(port)"], "pass --port 0"),
      (["--directory", temporary.url.path, "--unmatched", "500"], "--unmatched expects"),
      (["--directory", temporary.url.path, "--unmatched", "passthrough"], "needs a URL"),
      (
        ["--directory", temporary.url.path, "--unmatched", "passthrough", "ftp://x"],
        "--unmatched passthrough expects"
      ),
    ]
    for (arguments, message) in cases {
      let server = try start(arguments)
      #expect(await server.exit() == 2, "\(arguments)")
      #expect(server.errorText.contains(message), "\(arguments): \(server.errorText)")
      #expect(!server.errorText.contains("pass port 0"), "\(arguments): \(server.errorText)")
    }
  }

  // MARK: - The log

  @Test(
    .enabled(
      if: stubServer != nil && FileManager.default.isExecutableFile(atPath: "/bin/sh"),
      "stub-server or /bin/sh was not found"))
  func aLogThatNobodyReadsNeverHoldsAConnection() async throws {
    let temporary = try TemporaryFolder("stub-server")
    var bundle = MockBundle()
    bundle.stub(.get("/items/{id}"), with: .status(204))
    let file = temporary.appendingPathComponent("bundle.json")
    try bundle.write(to: file)
    // stub-server's output goes to a reader that takes the first line (the base URL) and then
    // reads nothing more until the test closes its input; a pipe holds 64 KiB.
    let script = #"""
      exec 3<&0
      "$0" --exit-with-parent "$1" <&3 | { head -n 1; read -r _ <&3; }
      """#
    let shell = try ChildProcess(
      URL(fileURLWithPath: "/bin/sh"),
      ["-c", script, try #require(Self.stubServer).path, file.path],
      environment: cleanEnvironment())
    defer { shell.stop() }
    let base = try #require(await shell.line().flatMap(URL.init(string:)), "\(shell.errorText)")
    // 200 log lines of 2 KiB each: far more than the pipe holds.
    let id = String(repeating: "x", count: 2_000)
    let url = base.appendingPathComponent("items/\(id)")
    for number in 1...200 {
      let (_, response) = try await get(url)
      try #require(response.statusCode == 204, "request \(number)")
    }
    shell.closeInput()
    #expect(shell.waitForOutputToClose(), "stub-server did not stop")
  }

  // MARK: - Not outliving the parent

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func exitWithParentStopsWhenStandardInputEnds() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let server = try start(["--directory", temporary.url.path])
    defer { server.stop() }
    let base = try #require(await server.line().flatMap(URL.init(string:)), "\(server.errorText)")
    #expect(base.port != nil)
    // What the end of the test process does to the pipe: the last write end closes.
    server.closeInput()
    #expect(await server.exit() == 0, "\(server.errorText)")
  }

  #if os(Linux)
    @Test(
      .enabled(
        if: stubServer != nil && FileManager.default.isExecutableFile(atPath: "/bin/sh"),
        "stub-server or /bin/sh was not found"))
    func exitWithParentStopsWhenItsParentIsKilledThoughItsInputStaysOpen() async throws {
      // A shell starts stub-server and is killed. The shell's standard input, which stub-server
      // shares, stays open here, so only the parent's death (PR_SET_PDEATHSIG) can end it.
      let temporary = try TemporaryFolder("stub-server")
      // (An asynchronous command's input is /dev/null unless redirected, and `<&0` would
      // copy that; so the shell's input goes to stub-server through descriptor 3.)
      let script = #"""
        exec 3<&0
        "$0" --exit-with-parent --directory "$1" <&3 3<&- &
        exec 3<&-
        wait
        """#
      let shell = try ChildProcess(
        URL(fileURLWithPath: "/bin/sh"),
        ["-c", script, try #require(Self.stubServer).path, temporary.url.path],
        environment: cleanEnvironment())
      defer { shell.stop() }
      let base = try #require(await shell.line().flatMap(URL.init(string:)), "\(shell.errorText)")
      #expect(base.port != nil)
      shell.send(SIGKILL)
      // stub-server holds the shell's output open for as long as it runs.
      #expect(shell.waitForOutputToClose(), "stub-server outlived its parent")
    }
  #endif

  // MARK: - The admin API

  /// Calls the admin API of a started stub-server.
  func admin(_ server: ChildProcess) async throws -> AdminClient {
    let first = try #require(await server.line(), "no first line; stderr: \(server.errorText)")
    return AdminClient(try #require(URL(string: first)))
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func theAdminAPIIsOnByDefaultIsNotLoggedAndShutdownExits0() async throws {
    let temporary = try TemporaryFolder("stub-server")
    try Data("hello".utf8).write(to: temporary.url.appendingPathComponent("hello.txt"))
    let server = try start(["--directory", temporary.url.path, "--port", "0"])
    defer { server.stop() }
    let admin = try await admin(server)
    #expect(try await admin.call("GET", "/__admin").status == 200)
    #expect(try await admin.call("GET", "/hello.txt").text == "hello")
    let count = try await admin.call("POST", "/__admin/requests/count", #"{"url": "/hello.txt"}"#)
    #expect(count.json?["count"] as? Int == 1)
    // The log has the one request to the stubs, not the admin calls around it.
    let line = try #require(await server.line())
    #expect(line.hasPrefix("GET /hello.txt 200"), "\(line)")
    #expect(try await admin.call("POST", "/__admin/shutdown").status == 200)
    #expect(await server.exit() == 0, "stderr: \(server.errorText)")
    #expect(!server.outputText.contains("__admin"), "\(server.outputText)")
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func noAdminSendsAdminPathsToTheStubs() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let server = try start([
      "--directory", temporary.url.path, "--port", "0", "--no-admin",
    ])
    defer { server.stop() }
    let admin = try await admin(server)
    #expect(try await admin.call("GET", "/__admin").status == 404)
    let line = try #require(await server.line())
    #expect(line.hasPrefix("GET /__admin 404"), "\(line)")
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func takesWireMocksJournalAndAddressFlags() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let path = temporary.url.path
    let none = try start([
      "--directory", path, "--port", "0", "--bind-address", "127.0.0.1", "--verbose",
      "--no-request-journal",
    ])
    defer { none.stop() }
    let noJournal = try await admin(none)
    try await noJournal.call("GET", "/x")
    let count = try await noJournal.call("POST", "/__admin/requests/count", "{}")
    #expect(count.json?["count"] as? Int == 0)
    #expect(count.json?["requestJournalDisabled"] as? Bool == true)

    let two = try start(["--directory", path, "--port=0", "--max-request-journal-entries", "2"])
    defer { two.stop() }
    let bounded = try await admin(two)
    for name in ["a", "b", "c"] { try await bounded.call("GET", "/\(name)") }
    let listed = try await bounded.call("GET", "/__admin/requests")
    let urls = AdminClient.requests(listed.json).map {
      ($0["request"] as? [String: Any])?["url"] as? String
    }
    #expect(urls == ["/c", "/b"])

    let everywhere = try start(["--directory", path, "--bind-address", "0.0.0.0"])
    defer { everywhere.stop() }
    #expect(await everywhere.exit() == 2)
    #expect(everywhere.errorText.contains("0.0.0.0"), "\(everywhere.errorText)")
  }

  @Test(
    .enabled(
      if: stubServer != nil,
      "stub-server was not found beside the test bundle; build it with swift build"))
  func servesAWireMockRootWhoseMappingsTheAdminAPIListsResetsAndSaves() async throws {
    let temporary = try TemporaryFolder("stub-server")
    let root = temporary.url
    let mappings = root.appendingPathComponent("mappings", isDirectory: true)
    let files = root.appendingPathComponent("__files", isDirectory: true)
    for folder in [mappings, files] {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }
    let id = "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7"
    let file = mappings.appendingPathComponent("user.json")
    try Data(
      #"{"id": "\#(id)", "request": {"method": "GET", "urlPath": "/user"}, "response": {"status": 200, "bodyFileName": "user.json"}}"#
        .utf8
    ).write(to: file)
    try Data(#"{"login":"octocat"}"#.utf8).write(to: files.appendingPathComponent("user.json"))

    let server = try start(["--root-dir", root.path, "--port", "0"])
    defer { server.stop() }
    let admin = try await admin(server)
    #expect(try await admin.call("GET", "/user").text == #"{"login":"octocat"}"#)
    func ids() async throws -> [String?] {
      let list = try await admin.call("GET", "/__admin/mappings")
      return (list.json?["mappings"] as? [[String: Any]] ?? []).map { $0["id"] as? String }
    }
    #expect(try await ids() == [id])
    // An added mapping goes on reset; the root's stays (WireMock 2.35.1 does the same).
    try await admin.call(
      "POST", "/__admin/mappings",
      #"{"request": {"url": "/added"}, "response": {"status": 204}}"#)
    #expect(try await ids().count == 2)
    #expect(try await admin.call("POST", "/__admin/reset").status == 200)
    #expect(try await ids() == [id])
    // Removing every mapping leaves the files alone, unlike WireMock 2.35.1.
    #expect(try await admin.call("DELETE", "/__admin/mappings").status == 200)
    #expect(try await ids().isEmpty)
    #expect(try await admin.call("GET", "/user").status == 404)
    #expect(FileManager.default.fileExists(atPath: file.path))
    // As in WireMock, a GET that no mapping matches gets the file of its path in __files/.
    let served = try await admin.call("GET", "/user.json")
    #expect(served.text == #"{"login":"octocat"}"#)
    #expect(try await admin.call("HEAD", "/user.json").status == 404)
    #expect(try await admin.call("POST", "/__admin/mappings/reset").status == 200)
    #expect(try await ids() == [id])
    // Save writes the added mapping to mappings/, in a file of its own that the format reads
    // back; the root's mapping is in its file already.
    try await admin.call(
      "POST", "/__admin/mappings",
      #"{"name": "Added one", "request": {"url": "/added"}, "response": {"status": 204}}"#)
    #expect(try await admin.call("POST", "/__admin/mappings/save").status == 200)
    let saved = try FileManager.default.contentsOfDirectory(atPath: mappings.path).sorted()
    #expect(saved.count == 2, "\(saved)")
    #expect(saved.contains { $0.hasPrefix("added-one-") }, "\(saved)")
    let reread = try MockBundle(contentsOf: root)
    #expect(reread.count == 2)
  }
}
