import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `serveWireMockFiles(of:)`: a WireMock root's `__files/` at their own paths, as WireMock 2.35.1
/// serves them to a `GET` that no mapping matches.
@Suite struct WireMockFilesTests {
  /// A mock of the root's mappings with its files served, and the root.
  func served(
    _ mappings: [String: String] = [:], files: [String: String]
  ) throws -> (URLSessionMock, URL) {
    let root = try WireMockFormatTests.root(mappings, files: files)
    // A root is a folder that holds mappings/, if an empty one.
    try FileManager.default.createDirectory(
      at: root.appendingPathComponent("mappings"), withIntermediateDirectories: true)
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: root))
    mock.serveWireMockFiles(of: root)
    return (mock, root)
  }

  @Test func aGetOfAFileGetsItWithWireMocksContentType() throws {
    let (mock, root) = try served(
      files: [
        "orders/7.json": #"{"id":7}"#, "notes.txt": "hi", "app.js": "go()",
        "data.yaml": "a: 1", "site/index.html": "<p>site</p>",
      ])
    defer { removeFolder(root) }
    let order = route(mock, "GET", "http://h.test/orders/7.json?expand=items")
    #expect(order.status == 200)
    #expect(order.text == #"{"id":7}"#)
    #expect(order.header("Content-Type") == "application/json")
    #expect(route(mock, "GET", "http://h.test/notes.txt").header("Content-Type") == "text/plain")
    #expect(
      route(mock, "GET", "http://h.test/app.js").header("Content-Type")
        == "application/javascript")
    // WireMock sends application/json for an extension it does not know.
    #expect(
      route(mock, "GET", "http://h.test/data.yaml").header("Content-Type") == "application/json")
    for path in ["/site", "/site/", "/site/index.html"] {
      let page = route(mock, "GET", "http://h.test" + path)
      #expect(page.text == "<p>site</p>", "\(path)")
      #expect(page.header("Content-Type") == "text/html", "\(path)")
    }
    #expect(mock.exchanges.allSatisfy { ($0.response as? HTTPURLResponse)?.statusCode == 200 })
  }

  @Test func everyMappingWinsWhateverItsPriority() throws {
    let (mock, root) = try served(
      ["late.json": #"{"priority": 9, "request": {"url": "/a.json"}, "response": {"body": "m"}}"#],
      files: ["a.json": "file", "b.json": "file"])
    defer { removeFolder(root) }
    #expect(route(mock, "GET", "http://h.test/a.json").text == "m")
    #expect(route(mock, "GET", "http://h.test/b.json").text == "file")
    mock.stub(.get("/b.json"), with: .text("code")).priority(1_000)
    #expect(route(mock, "GET", "http://h.test/b.json").text == "code")
  }

  @Test func onlyAGetOfAFileThatIsThereIsServed() throws {
    let (mock, root) = try served(files: ["a.json": "{}", "empty/.keep": ""])
    defer { removeFolder(root) }
    let refused = [
      ("HEAD", "/a.json", "expected GET (WireMock serves its files to GET alone), got HEAD"),
      ("POST", "/a.json", "got POST"),
      ("GET", "/b.json", "/b.json names no file"),
      ("GET", "/empty/", "/empty/ names no file"),
      ("GET", "/a.json/", "/a.json/ names no file"),
      ("GET", "/%2e%2e/mappings", "names no file"),
      ("GET", "/..%2f__files/a.json", "names no file"),
    ]
    for (method, path, reason) in refused {
      expectReport {
        #expect(route(mock, method, "http://h.test" + path).urlErrorCode == .resourceUnavailable)
      } matching: { report in
        report.message.contains("WireMock's static files") && report.message.contains(reason)
      }
    }
  }

  @Test func aFileAddedLaterIsServedAsWireMockServesIt() throws {
    let (mock, root) = try served(files: ["a.json": "{}"])
    defer { removeFolder(root) }
    _ = try writeFile("late", "__files/late.txt", in: root)
    #expect(route(mock, "GET", "http://h.test/late.txt").text == "late")
  }

  @Test func theFileStubIsNotAMappingOfTheBundle() throws {
    let root = try WireMockFormatTests.root(
      ["a.json": #"{"request": {"url": "/a"}, "response": {"bodyFileName": "a.txt"}}"#],
      files: ["a.txt": "a"])
    defer { removeFolder(root) }
    let bundle = try MockBundle(contentsOf: root)
    #expect(bundle.count == 1)
    let mock = URLSessionMock(bundle: bundle)
    let stub = mock.serveWireMockFiles(of: root)
    _ = route(mock, "GET", "http://h.test/a.txt")
    _ = route(mock, "GET", "http://h.test/a")
    #expect(stub.callCount == 1)
  }
}
