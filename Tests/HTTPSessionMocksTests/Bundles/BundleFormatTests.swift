import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct BundleFormatTests {
  /// A bundle with one stub of every kind the factories make.
  static var everyFactory: MockBundle {
    // `URLError.Code(rawValue:)` is failable on Linux only.
    let unknownCode: URLError.Code =
      [URLError.Code(rawValue: 12345)].compactMap { $0 }.first ?? .unknown
    var bundle = MockBundle()
    bundle.stub(
      .get("/users/{login}").query(["page": nil, "q": "swift"]),
      with: .json(Account(login: "a", id: 1)))
    bundle.stub(
      .post("https://api.example.com:8443/items"),
      with: .status(201, headers: ["Location": "/items/1"]))
    bundle.stub(.put("/a").header("Authorization", "Bearer t").header("Accept"), with: .text("put"))
    bundle.stub(.patch("/b").body(Data("raw body".utf8)), with: .data(Data([0, 1, 2, 255])))
    bundle.stub(
      .delete("/c").jsonBody(Account(login: "x", id: 2)), with: .json(["ok": true, "n": 1.5]))
    bundle.stub(.head("/d") && !.header("Cookie"), with: .status(204))
    bundle.stub(
      .regex("^https://x\\.test/v[0-9]+/") || .method("OPTIONS", "/e"), with: .status(200))
    bundle.stub(.any, with: .error(URLError(.notConnectedToInternet)))
    bundle.stub(.url("/f").body(Data([0xFF, 0xFE])), with: .error(URLError(unknownCode)))
    bundle.stub(
      .get("/flaky"), with: [.error(URLError(.timedOut)), .status(503), .text("ok")], times: 5)
    bundle.stub(.get("/slow"), with: .text("late").delayed(by: .milliseconds(1500)))
    bundle.stub(
      .get("/drip"),
      with: .text("drip drip").dribbled(inChunks: 3, over: .seconds(2)).delayed(by: .nanoseconds(1))
    )
    bundle.stub(.get("/state"), with: .status(200), whenState: "a", willSetState: "b")
    bundle.stub(.get("/text"), with: .text("line\nwith \"quotes\" and ünïcode\t\u{1}"))
    bundle.stub(.get("/fixture"), with: .file("Fixtures/user.json", in: .module))
    bundle.stub(.get("/users/{login"), with: .status(200))
    bundle.stub(
      .get("/chat"),
      with: .webSocket(
        subprotocol: "chat",
        [
          .send(.string("welcome")), .send(.data(Data([1, 2, 3]))), .receive(.string("hi")),
          .receive(.data(Data([0]))), .receive(nil), .wait(.milliseconds(1500)), .ping,
          .close(.goingAway, reason: "bye"), .drop,
        ]
      ).delayed(by: .seconds(1)))
    bundle.stub(.get("/bare"), with: .webSocket([]))
    return bundle
  }

  @Test(arguments: ["folder", "bundle.json"])
  func everyFactoryRoundTrips(_ name: String) throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    let bundle = Self.everyFactory
    let target = folder.appendingPathComponent(name)
    try bundle.write(to: target)
    let reloaded = try MockBundle(contentsOf: target)
    #expect(reloaded == bundle)
    // And once more: the written form is stable.
    let again = folder.appendingPathComponent("again-" + name)
    try reloaded.write(to: again)
    let first = try Data(
      contentsOf: name == "folder" ? target.appendingPathComponent("bundle.json") : target)
    let second = try Data(
      contentsOf: name == "folder" ? again.appendingPathComponent("bundle.json") : again)
    #expect(first == second)
  }

  @Test func encodedJSONIsSelfContainedAndDecodes() throws {
    let bundle = Self.everyFactory
    let data = try bundle.encodedJSON()
    let reloaded = try MockBundle(decodingJSON: data, source: "environment")
    #expect(reloaded == bundle)
    #expect(!String(decoding: data, as: UTF8.self).contains("\"file\""))
  }

  @Test func theFileIsReadableSortedAndPretty() throws {
    var bundle = MockBundle()
    bundle.stub(
      .get("/users/{login}").header("Accept", "application/json"),
      with: .json(Account(login: "octocat", id: 1)))
    bundle.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(3)), times: 2)
    let text = String(decoding: try bundle.encodedJSON(), as: UTF8.self)
    #expect(
      text == """
        {
          "entries": [
            {
              "request": {
                "headers": {
                  "Accept": "application/json"
                },
                "method": "GET",
                "url": "/users/{login}"
              },
              "response": {
                "headers": {
                  "Content-Type": "application/json"
                },
                "json": {
                  "id": 1,
                  "login": "octocat"
                },
                "status": 200
              }
            },
            {
              "request": {
                "method": "GET",
                "url": "/slow"
              },
              "response": {
                "delay": "3s",
                "headers": {
                  "Content-Type": "text/plain; charset=utf-8"
                },
                "status": 200,
                "text": "late"
              },
              "times": 2
            }
          ],
          "version": 1
        }

        """)
  }

  @Test func binaryBodiesGoToSiblingFilesInAFolder() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    var bundle = MockBundle()
    bundle.stub(.get("/png"), with: .data(Data([0x89, 0x50, 0x4E, 0x47, 0, 0xFF])))
    bundle.stub(.get("/fixture"), with: .file("Fixtures/user.json", in: .module))
    try bundle.write(to: folder)
    let document = String(
      decoding: try Data(contentsOf: folder.appendingPathComponent("bundle.json")), as: UTF8.self)
    #expect(document.contains("\"file\": \"bodies/entry-1-1.bin\""))
    #expect(document.contains("\"file\": \"Fixtures/user.json\""))
    #expect(
      try Data(contentsOf: folder.appendingPathComponent("bodies/entry-1-1.bin"))
        == Data([0x89, 0x50, 0x4E, 0x47, 0, 0xFF]))
    #expect(
      FileManager.default.fileExists(
        atPath: folder.appendingPathComponent("Fixtures/user.json").path))
    // One file: inline base64.
    let single = folder.appendingPathComponent("one.json")
    try bundle.write(to: single)
    let inline = String(decoding: try Data(contentsOf: single), as: UTF8.self)
    #expect(inline.contains("\"base64\": \"iVBORwD/\""))
    #expect(try MockBundle(contentsOf: single) == bundle)
  }

  @Test func reloadedStubsAnswerLikeTheOriginals() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    var bundle = MockBundle()
    bundle.stub(.get("/users/{login}"), with: .json(Account(login: "a", id: 2)))
    bundle.stub(.post("/items").jsonBody(Account(login: "b", id: 3)), with: .status(201))
    try bundle.write(to: folder)
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    let user = route(mock, "GET", "https://x.test/users/a")
    #expect(user.status == 200)
    #expect(user.header("Content-Type") == "application/json")
    #expect(
      try JSONDecoder().decode(Account.self, from: user.data ?? Data())
        == Account(login: "a", id: 2))
    let created = route(
      mock, "POST", "https://x.test/items", body: Data(#"{"id":3,"login":"b"}"#.utf8))
    #expect(created.status == 201)
  }

  @Test func aReasonPhraseAndHeadersWithSeveralValuesComeBackFromTheFile() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    var bundle = MockBundle()
    bundle.stub(
      .post("/login"),
      with: .status(201, headers: ["X-A": "1"]).header("Set-Cookie", values: ["a=1", "b=2"])
        .reasonPhrase("Welcome"))
    let file = folder.appendingPathComponent("bundle.json")
    try bundle.write(to: file)
    let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    #expect(text.contains(#""reasonPhrase": "Welcome""#), "\(text)")
    #expect(text.contains(#""Set-Cookie": ["#), "\(text)")
    #expect(try MockBundle(contentsOf: file) == bundle)
  }

  // MARK: - Bad input

  @Test(arguments: [
    (
      #"{"version": 1, "entries": [{"request": {"url": "/a"}, "response": {"status": "abc"}}]}"#,
      #"entries[0].response.status: expected a number, got "abc""#
    ),
    (#"{"version": 2, "entries": []}"#, "version: this library reads version 1"),
    (#"{"entries": []}"#, #"expected a member "version""#),
    (#"{"version": 1}"#, #"expected a member "entries""#),
    (#"{"version": 1, "entries": {}}"#, "entries: expected an array, got an object"),
    (
      #"{"version": 1, "entries": [{"request": {"url": "/a"}}]}"#,
      #"entries[0]: expected a member "response""#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"url": "/a"}, "response": {}, "responses": []}]}"#,
      "entries[0]: has both"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"ur": "/a"}, "response": {}}]}"#,
      "entries[0].request.ur: unknown member"
    ),
    (
      #"{"version": 1, "entries": [{"request": {}, "response": {}}]}"#,
      "entries[0].request: expected at least one condition"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"url": "/a{"}, "response": {}}]}"#,
      #"entries[0].request.url: the pattern "/a{" is malformed"#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"regex": "("}, "response": {}}]}"#,
      "entries[0].request.regex: the regular expression /(/ does not compile"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"status": 1000}}]}"#,
      "entries[0].response.status: expected an HTTP status code from 100 to 999, got 1000"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"status": 200.5}}]}"#,
      "entries[0].response.status: expected a whole number, got 200.5"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"delay": "3"}}]}"#,
      #"entries[0].response.delay: expected a duration in seconds such as "2.5s", got "3""#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"reasonPhrase": "a\nb"}}]}"#,
      #"entries[0].response.reasonPhrase: The reason phrase "a\nb" holds the control character U+000A"#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"headers": {"A": [1]}}}]}"#,
      "entries[0].response.headers.A[0]: expected a string, got 1"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"base64": "!!"}}]}"#,
      #"entries[0].response.base64: expected base64 text, got "!!""#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"text": "a", "json": 1}}]}"#,
      "entries[0].response: has several bodies (text, json)"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"error": {"urlError": "nope"}}}]}"#,
      #"entries[0].response.error.urlError: expected a URLError code"#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"status": 200, "error": {"urlError": -1001}}}]}"#,
      #"entries[0].response: has both "error" and "status""#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {}, "times": -1}]}"#,
      "entries[0].times: expected a count of zero or more, got -1"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"or": [{"any": true}]}, "response": {}}]}"#,
      "entries[0].request.or: expected a list of two matchers, got an array"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"file": "a.txt"}}]}"#,
      "entries[0].response.file: the file \"a.txt\" does not exist; looked for"
    ),
    (#"{"version": 1, "entries": [], "#, "not valid JSON"),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"dribble": {"chunks": 2, "over": "-1s"}}}]}"#,
      #"entries[0].response.dribble.over: expected a duration of zero or more, got "-1s""#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"url": "/a"}, "response": {"4x.te": "a"}}]}"#,
      #"entries[0].response["4x.te"]: unknown member"#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"url": "/a"}, "response": {"headers": {"X-B": "b\r\nSet-Cookie: x=1"}}}]}"#,
      #"entries[0].response.headers.X-B: the value of the header X-B holds a carriage return"#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"url": "/a"}, "response": {"headers": {"X:B": "b"}}}]}"#,
      #"entries[0].response.headers["X:B"]: "X:B" is not a header name"#
    ),
  ])
  func malformedDocumentsNameWhereAndWhat(_ document: String, _ expected: String) throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    let file = try writeFile(document, "bundle.json", in: folder)
    let error = bundleError { _ = try MockBundle(contentsOf: folder) }
    #expect(
      error?.description.contains(expected) == true,
      "\(error.map(String.init(describing:)) ?? "no error")")
    #expect(error?.source == file.path)
  }

  /// Text that is not JSON names its line and column and Foundation's reason; a value that
  /// cannot be read names its path.
  @Test(arguments: [
    (
      "{\n  \"version\": 1,\n  \"entries\": [\n", ":4:1: not valid JSON: Unexpected end of file"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"json": {"n": 1e999}}}]}"#,
      "entries[0].response.json.n: Number 1e999 is not representable"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"text": "a<FF>"}}]}"#,
      "entries[0].response.text: Invalid UTF-8 sequence"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"json": {"a<FF>": 1}}}]}"#,
      ":1:79: not valid JSON: Invalid UTF-8 sequence (byte 0xFF) in a string (an object's key)"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"json": {"\udc00": 1}}}]}"#,
      #":1:78: not valid JSON: A lone surrogate \uDC00"#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"text": "\ud800"}}]}"#,
      #":1:77: entries[0].response.text: A lone surrogate \uD800"#
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"json": <DEEP>"#,
      ":1:584: not valid JSON: Too many nested arrays or dictionaries (more than 512)"
    ),
    (
      #"{"version": 1, "entries": [,]}"#,
      ":1:28: not valid JSON: Invalid value: expected a value, found \",\""
    ),
  ])
  func unreadableTextNamesTheLineAndColumnWithTheReason(_ document: String, _ expected: String)
    throws
  {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try bytesWithFF(document.replacing("<DEEP>", with: String(repeating: "[", count: 100_000)))
      .write(to: folder.appendingPathComponent("bundle.json"))
    let error = bundleError { _ = try MockBundle(contentsOf: folder) }
    #expect(
      error?.description.contains(expected) == true,
      "\(error.map(String.init(describing:)) ?? "no error")")
    #expect(error?.localizedDescription == error?.description)
  }

  @Test(arguments: [
    (#"{"version": 1, "version": 1, "entries": []}"#, "version"),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"status": 200, "status": 404}}]}"#,
      "entries[0].response.status"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"any": true}, "response": {"headers": {"A": "1", "A": "2"}}}]}"#,
      "entries[0].response.headers.A"
    ),
    (
      #"{"version": 1, "entries": [{"request": {"jsonBody": {"a": 1, "a": 2}}, "response": {}}]}"#,
      "entries[0].request.jsonBody.a"
    ),
  ])
  func aKeyGivenTwiceIsRefusedWithItsPath(_ document: String, _ path: String) throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try writeFile(document, "bundle.json", in: folder)
    let error = bundleError { _ = try MockBundle(contentsOf: folder) }
    #expect(
      error?.description.contains("\(path): the key") == true
        && error?.description.contains("appears more than once") == true,
      "\(error.map(String.init(describing:)) ?? "no error")")
  }

  /// A recorded request (written with "exactURL") compares a JSON body as a JSON value, as the
  /// HAR entry it came from does: recorded bundles replay whatever the key order.
  @Test func aRecordedJSONBodyInABundleMatchesAsAJSONValue() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try writeFile(
      #"""
      {"version": 1, "entries": [
        {"request": {"method": "POST", "exactURL": "https://x.test/todos",
                     "body": {"text": "{\"title\":\"eggs\",\"done\":false}"}},
         "response": {"status": 201}},
        {"request": {"method": "POST", "url": "https://x.test/exact",
                     "body": {"text": "{\"title\":\"eggs\",\"done\":false}"}},
         "response": {"status": 202}}]}
      """#, "bundle.json", in: folder)
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    let reordered = Data(#"{"done":false,"title":"eggs"}"#.utf8)
    #expect(route(mock, "POST", "https://x.test/todos", body: reordered).status == 201)
    // `body` written in code (a pattern, not a recording) stays byte for byte.
    expectReport(containing: "No stub matches") {
      #expect(route(mock, "POST", "https://x.test/exact", body: reordered).status == nil)
    }
  }

  @Test func aHARRecordingWrittenAsABundleKeepsMatchingJSONAsJSON() throws {
    let har = HARFixtures.har(
      HARFixtures.entry(
        "POST", "https://x.test/todos", status: 201, postData: #"{"title":"eggs","done":false}"#))
    let bundle = try MockBundle(contentsOf: HARFixtures.file(har))
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try bundle.write(to: folder)
    let written = String(
      decoding: try Data(contentsOf: folder.appendingPathComponent("bundle.json")), as: UTF8.self)
    #expect(written.contains(#""jsonBody""#), "\(written)")
    let reloaded = try MockBundle(contentsOf: folder)
    #expect(reloaded == bundle)
    let reordered = Data(#"{"done":false,"title":"eggs"}"#.utf8)
    #expect(
      route(URLSessionMock(bundle: reloaded), "POST", "https://x.test/todos", body: reordered)
        .status == 201)
  }

  @Test func aFileThatIsNoBundleSaysWhatWasExpected() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    let file = try writeFile("42", "x.json", in: folder)
    let error = bundleError { _ = try MockBundle(contentsOf: file) }
    #expect(error?.description.contains(#"expected a JSON object with "version""#) == true)
    let empty = try makeTemporaryFolder()
    defer { removeFolder(empty) }
    let missing = bundleError { _ = try MockBundle(contentsOf: empty) }
    #expect(missing?.kind == .unreadable)
    #expect(missing?.description.contains("no readable bundle.json") == true)
  }

  @Test func harFilesGoToTheHARReader() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    // Named .json: the content decides.
    let file = try writeFile(#"{"log": {"version": "1.2", "entries": []}}"#, "x.json", in: folder)
    do {
      let bundle = try MockBundle(contentsOf: file)
      #expect(bundle.count == 0)
    } catch let error as MockBundleError {
      // Until the HAR reader lands, the placeholder says so.
      #expect(error.kind == .unsupported)
    }
  }
}
