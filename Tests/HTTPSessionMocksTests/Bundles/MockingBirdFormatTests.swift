import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct MockingBirdFormatTests {
  /// A Mock-Bundle folder as MockingBird's users have them: tabs, several entries, files.
  static func httpbinFolder() throws -> URL {
    let folder = try makeTemporaryFolder()
    try writeFile(
      """
      [
      \t{ "request": { "method": "GET", "url": "://httpbin.org/ip" },
      \t  "response": { "code": 200, "file": "ip.json", "mime_type": "application/json" } },
      \t{ "request": { "method": "GET", "url": "://httpbin.org/get", "parameters": { "arg1": "test", "arg2": "test" } },
      \t  "response": { "code": 200, "file": "get_arg.json", "mime_type": "application/json" } },
      \t{ "request": { "method": "GET", "url": "://httpbin.org/get", "parameters": { "arg1": "foobar" } },
      \t  "response": { "code": 200, "file": "nested/get_arg1.json", "mime_type": "application/json" } },
      \t{ "request": { "url": "://httpbin.org/get" },
      \t  "response": { "code": 204, "headers": { "Content-Type": "text/plain", "X-Entry": "4" } } },
      \t{ "request": { "url": "://httpbin.org/any", "parameters": { "id": null } },
      \t  "response": { "code": 200, "headers": { "X-Entry": "5" } } },
      \t{ "request": { "url": "://localhost:8080/Path With/Space/" },
      \t  "response": { "code": 202 } },
      \t{ "request": { "method": "post", "url": "://httpbin.org/post" },
      \t  "response": { "code": 201 } },
      \t{ "request": { "url": "://httpbin.org/ip" },
      \t  "response": { "code": 500 } }
      ]
      """, "bundle.json", in: folder)
    try writeFile(#"{"origin": "127.0.0.1"}"#, "ip.json", in: folder)
    try writeFile(#"{"args": {"arg1": "test", "arg2": "test"}}"#, "get_arg.json", in: folder)
    try writeFile(#"{"args": {"arg1": "foobar"}}"#, "nested/get_arg1.json", in: folder)
    return folder
  }

  @Test func entriesAnswerWithTheirFilesAndMimeTypes() throws {
    let folder = try Self.httpbinFolder()
    defer { removeFolder(folder) }
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    for scheme in ["http", "https", "ftp"] {
      let answer = route(mock, "GET", "\(scheme)://httpbin.org/ip")
      #expect(answer.status == 200)
      #expect(answer.header("Content-Type") == "application/json")
      #expect(answer.text == #"{"origin": "127.0.0.1"}"#)
    }
    #expect(
      route(mock, "GET", "https://httpbin.org/get?arg1=foobar").text
        == #"{"args": {"arg1": "foobar"}}"#)
  }

  @Test func theFirstMatchingEntryInFileOrderWins() throws {
    let folder = try Self.httpbinFolder()
    defer { removeFolder(folder) }
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    // Entry 1 and entry 8 both match; MockingBird answers with the first.
    #expect(route(mock, "GET", "https://httpbin.org/ip").status == 200)
    // No query: entries 2 and 3 name parameters, so entry 4 answers.
    #expect(route(mock, "GET", "https://httpbin.org/get").status == 204)
  }

  @Test func queryRuleRunsOneWay() throws {
    let folder = try Self.httpbinFolder()
    defer { removeFolder(folder) }
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    // Every request item named with an equal value: entry 2.
    #expect(
      route(mock, "GET", "https://httpbin.org/get?arg1=test&arg2=test").text?.contains("test")
        == true)
    // Parameters the request lacks are not required: entry 2 still answers.
    #expect(route(mock, "GET", "https://httpbin.org/get?arg2=test").text?.contains("arg2") == true)
    // An item the entry does not name fails entries 2 and 3; entry 4 has no parameters, and
    // a request with a query item it does not name fails it too.
    expectReport(containing: "httpbin.org/get") {
      #expect(
        route(mock, "GET", "https://httpbin.org/get?arg1=test&extra=1").urlErrorCode
          == .resourceUnavailable)
    }
    // null: any value, but the request must have a query.
    #expect(route(mock, "GET", "https://httpbin.org/any?id=42").header("X-Entry") == "5")
    #expect(route(mock, "GET", "https://httpbin.org/any?id=").header("X-Entry") == "5")
    expectReport(containing: "has none") {
      route(mock, "GET", "https://httpbin.org/any")
    }
    // An empty query is a query with no items: every item (none) is named.
    #expect(route(mock, "GET", "https://httpbin.org/any?").header("X-Entry") == "5")
  }

  /// The entry's URL is compared as written with the request's decoded path, as MockingBird's
  /// code does: an entry must spell a space as a space.
  @Test func urlComparesHostPortAndDecodedPathExactly() throws {
    let folder = try Self.httpbinFolder()
    defer { removeFolder(folder) }
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    #expect(route(mock, "GET", "http://localhost:8080/Path%20With/Space/").status == 202)
    let misses = [
      "http://localhost/Path%20With/Space/", "http://localhost:8081/Path%20With/Space/",
      "http://localhost:8080/Path%20With/Space", "http://localhost:8080/path%20with/space/",
    ]
    for miss in misses {
      expectReport(containing: "://localhost:8080/Path With/Space/") {
        route(mock, "GET", miss)
      }
    }
  }

  @Test func methodDefaultsToGETAndComparesExactly() throws {
    let folder = try Self.httpbinFolder()
    defer { removeFolder(folder) }
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    expectReport(containing: "method: expected post (exactly), got POST") {
      route(mock, "POST", "https://httpbin.org/post")
    }
    var lowercase = routingRequest("GET", "https://httpbin.org/post")
    lowercase.httpMethod = "post"
    if lowercase.httpMethod == "post" {
      #expect(route(mock, lowercase).status == 201)
    }
  }

  @Test func contentTypeComesOnlyFromMimeType() throws {
    let folder = try Self.httpbinFolder()
    defer { removeFolder(folder) }
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    let answer = route(mock, "GET", "https://httpbin.org/get")
    #expect(answer.header("X-Entry") == "4")
    #expect(answer.header("Content-Type") == nil)
  }

  @Test func aMockingBirdBundleRoundTripsThroughOurFormat() throws {
    let folder = try Self.httpbinFolder()
    defer { removeFolder(folder) }
    let bundle = try MockBundle(contentsOf: folder)
    let ours = folder.appendingPathComponent("ours")
    try bundle.write(to: ours)
    let reloaded = try MockBundle(contentsOf: ours)
    #expect(reloaded == bundle)
    // The body files keep their names.
    #expect(
      FileManager.default.fileExists(
        atPath: ours.appendingPathComponent("nested/get_arg1.json").path))
    let mock = URLSessionMock(bundle: reloaded)
    #expect(route(mock, "GET", "https://httpbin.org/ip").status == 200)
    #expect(route(mock, "GET", "https://httpbin.org/get").status == 204)
  }

  // MARK: - Bad input

  @Test(arguments: [
    (
      #"[ { "request": { "url": "://a.test/x" }, "response": { "code": 200 } }, { "request": { "url": "://a.test/y" }, "response": { "code": "abc" } } ]"#,
      #"[1].response.code: expected a number, got "abc""#
    ),
    (#"[ { "request": { "url": "://a.test/x" } } ]"#, #"[0]: expected a member "response""#),
    (#"[ { "response": { "code": 200 } } ]"#, #"[0]: expected a member "request""#),
    (
      #"[ { "request": { "url": "https://a.test/x" }, "response": { "code": 200 } } ]"#,
      "[0].request.url: expected a URL of the form ://host[:port]/path"
    ),
    (
      #"[ { "request": { "url": 1 }, "response": { "code": 200 } } ]"#,
      "[0].request.url: expected a string, got 1"
    ),
    (
      #"[ { "request": { "url": "://a/x", "parameters": { "p": 1 } }, "response": { "code": 200 } } ]"#,
      "[0].request.parameters.p: expected a string or null, got 1"
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "headers": { "X": true } } } ]"#,
      "[0].response.headers.X: expected a string, got true"
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 204, "headers": { "/ontent-Type": "a" } } } ]"#,
      #"[0].response.headers["/ontent-Type"]: "/ontent-Type" is not a header name"#
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "headers": { "X": "a\r\nY: b" } } } ]"#,
      "[0].response.headers.X: the value of the header X holds a carriage return"
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "mime_type": "a/b\n" } } ]"#,
      "[0].response.mime_type: the value of the header Content-Type holds a line feed"
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "file": "missing.json" } } ]"#,
      #"[0].response.file: the file "missing.json" does not exist; looked for"#
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "file": "../../etc/passwd" } } ]"#,
      #"[0].response.file: "../../etc/passwd" leads outside the bundle's folder"#
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "file": "/etc/passwd" } } ]"#,
      #"[0].response.file: "/etc/passwd" leads outside"#
    ),
    (#"[ 1 ]"#, "[0]: expected an object, got 1"),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "fiel": "a.json" } } ]"#,
      #"[0].response.fiel: not a member this format knows; it looks like a misspelling of "file""#
    ),
    (
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "mimetype": "a/b" } } ]"#,
      #"[0].response.mimetype: not a member this format knows; it looks like a misspelling of "mime_type""#
    ),
    (
      "[\n  { \"request\": { \"url\": \"://a/x\" },\n    \"response\": { \"code\": 200 }",
      ":3:32: not valid JSON: Unexpected end of file (the object is not closed)"
    ),
  ])
  func malformedBundlesNameTheEntryAndWhat(_ document: String, _ expected: String) throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try writeFile(document, "bundle.json", in: folder)
    let error = bundleError { _ = try MockBundle(contentsOf: folder) }
    #expect(
      error?.description.contains(expected) == true,
      "\(error.map(String.init(describing:)) ?? "no error")")
  }

  @Test func aSymbolicLinkOutOfTheFolderIsRefused() throws {
    let outside = try makeTemporaryFolder()
    let folder = try makeTemporaryFolder()
    defer {
      removeFolder(folder)
      removeFolder(outside)
    }
    let secret = try writeFile("secret", "secret.txt", in: outside)
    try FileManager.default.createSymbolicLink(
      at: folder.appendingPathComponent("link.txt"), withDestinationURL: secret)
    try writeFile(
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "file": "link.txt" } } ]"#,
      "bundle.json", in: folder)
    let error = bundleError { _ = try MockBundle(contentsOf: folder) }
    #expect(error?.kind == .fileOutsideBundle)
    #expect(error?.description.contains("symbolic link") == true)
    // A link that stays inside is fine.
    try writeFile("inside", "real.txt", in: folder)
    try FileManager.default.createSymbolicLink(
      at: folder.appendingPathComponent("alias.txt"),
      withDestinationURL: folder.appendingPathComponent("real.txt"))
    try writeFile(
      #"[ { "request": { "url": "://a/x" }, "response": { "code": 200, "file": "sub/../alias.txt" } } ]"#,
      "bundle.json", in: folder)
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    #expect(route(mock, "GET", "https://a/x").text == "inside")
  }

  /// MockingBird's rule for a key given twice is HAR's: the last one counts.
  @Test func aKeyGivenTwiceCountsWithItsLastValue() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    try writeFile(
      #"[ { "request": { "url": "://a/x", "url": "://a/y" }, "response": { "code": 500, "code": 201 } } ]"#,
      "bundle.json", in: folder)
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: folder))
    #expect(route(mock, "GET", "https://a/y").status == 201)
  }
}
