import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

/// Malformed HAR files fail with an error that names the file, the path and what was expected.
@Suite struct HARErrorTests {
  static let valid = HARFixtures.entry("GET", "https://x.test/a")

  /// Each broken document, and what its error must say.
  static let cases: [(document: String, message: String)] = [
    (
      "{ this is not json",
      #"session.har:1:3: not valid JSON: Expected a key (a string in double quotes), found "t""#
    ),
    (
      "[]",
      "session.har: expected an object (a HAR document: {\"log\": {\"entries\": [...]}}), got an array"
    ),
    (#"{"log": 3}"#, "session.har: log: expected an object, got 3"),
    (
      #"{"log": {"version": "1.2"}}"#,
      #"log: expected a member "entries" (the list of recorded exchanges)"#
    ),
    (#"{"log": {"entries": {}}}"#, "log.entries: expected an array, got an object"),
    (HARFixtures.har(Self.valid, "17"), "log.entries[1]: expected an object, got 17"),
    (
      HARFixtures.har(Self.valid, valid.replacing(#""status": 200"#, with: #""status": "abc""#)),
      #"session.har: log.entries[1].response.status: expected a number, got "abc""#
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""status": 200"#, with: #""status": true"#)),
      "log.entries[0].response.status: expected a number, got true"
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""status": 200"#, with: #""status": 200.5"#)),
      "log.entries[0].response.status: expected a whole number, got 200.5"
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""status": 200"#, with: #""status": 1000"#)),
      "log.entries[0].response.status: expected an HTTP status from 100 to 999 (or 0)"
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""method": "GET""#, with: #""method": null"#)),
      "log.entries[0].request.method: expected a string, got null"
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""method": "GET""#, with: #""method": "G ET""#)),
      #"log.entries[0].request.method: expected an HTTP method, got "G ET""#
    ),
    (
      HARFixtures.har(Self.valid.replacing("https://x.test/a", with: "/relative/path")),
      #"log.entries[0].request.url: expected an absolute URL with a scheme and a host, got "/relative/path""#
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""request": {"#, with: #""request": 1, "x": {"#)),
      "log.entries[0].request: expected an object, got 1"
    ),
    (
      HARFixtures.har(
        valid.replacing(
          #""status": 200, "statusText": "", "httpVersion": "HTTP/1.1", "headers": []"#,
          with: #""status": 200, "headers": [{"name": "A", "value": "1"}, {"value": "x"}]"#)),
      #"log.entries[0].response.headers[1]: expected a member "name" (the header's name)"#
    ),
    (
      HARFixtures.har(
        valid.replacing(#""text": """#, with: #""text": "%%%", "encoding": "base64""#)),
      #"log.entries[0].response.content.text: expected base64 (the encoding says so), got "%%%""#
    ),
    (
      HARFixtures.har(
        Self.valid.replacing(#""text": """#, with: #""text": "x", "encoding": "rot13""#)),
      #"log.entries[0].response.content.encoding: expected "base64" or nothing, got "rot13""#
    ),
    (
      HARFixtures.har(
        valid.replacing(#""bodySize": -1}"#, with: #""bodySize": -1, "postData": "x"}"#)),
      #"log.entries[0].request.postData: expected an object, got "x""#
    ),
  ]

  @Test(arguments: cases.indices)
  func aMalformedFileNamesWhereAndWhat(_ index: Int) throws {
    let (document, message) = Self.cases[index]
    do {
      _ = try HARFixtures.replaying(document)
      Issue.record("case \(index) loaded: \(document)")
    } catch let error as MockBundleError {
      #expect(error.description.contains(message), "case \(index)")
      #expect(error.source == "session.har")
    }
  }

  @Test func fieldsAHARMayOmitNeverFailTheLoad() throws {
    let minimal = HARFixtures.har(
      #"{"request": {"method": "GET", "url": "https://x.test/min"}, "response": {"status": 204}}"#,
      #"{"request": {"method": "GET", "url": "https://x.test/nulls", "headers": null, "postData": null},"#
        + #" "response": {"status": 200, "headers": null, "content": {"text": null, "size": -1},"#
        + #" "_error": null, "bodySize": -1}, "time": "n/a", "_custom": [1, 2]}"#)
    let (mock, _) = try HARFixtures.replaying(minimal)
    #expect(HARFixtures.send(mock, "https://x.test/min").status == 204)
    #expect(HARFixtures.send(mock, "https://x.test/nulls").data == Data())
  }

  /// The error that loading `data` as `session.har` throws, as a replaying mock and as a
  /// bundle: both say the same.
  static func loadError(_ data: Data) throws -> String {
    let file = try HARFixtures.file("", named: "session.har")
    try data.write(to: file)
    var messages: [String] = []
    do {
      _ = try URLSessionMock(
        replaying: file, mode: .replay, from: URLSessionMock(), environment: [:])
    } catch {
      messages.append(error.localizedDescription)
    }
    do {
      _ = try MockBundle(contentsOf: file)
    } catch {
      messages.append(error.localizedDescription.replacing(file.path, with: "session.har"))
    }
    #expect(messages.count == 2 && messages[0] == messages[1], "\(messages)")
    return messages.first ?? "no error"
  }

  /// Text that is not JSON names its line and column with Foundation's reason; a replayed value
  /// that cannot be read names its path (and where it is).
  static let unreadable: [(document: String, message: String)] = [
    (
      String(HARFixtures.har(Self.valid).dropLast(40)),
      "session.har:8:26: not valid JSON: Unexpected end of file (expected a value)"
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""status": 200"#, with: #""status": 1e999"#)),
      "log.entries[0].response.status: Number 1e999 is not representable"
    ),
    (
      HARFixtures.har(Self.valid.replacing("https://x.test/a", with: "https://x.test/<FF>")),
      "session.har:3:54: log.entries[0].request.url: Invalid UTF-8 sequence (byte 0xFF)"
    ),
    (
      HARFixtures.har(Self.valid.replacing(#""text": """#, with: #""text": "\udc00x""#)),
      #"log.entries[0].response.content.text: A lone surrogate \uDC00"#
    ),
    (
      HARFixtures.har(
        valid.replacing(
          #""cache": {}"#, with: #""cache": "# + String(repeating: "[", count: 100_000))),
      "not valid JSON: Too many nested arrays or dictionaries (more than 512)"
    ),
    (
      HARFixtures.har(Self.valid) + " trailing",
      "not valid JSON: Unexpected \"t\" after the end of the document"
    ),
  ]

  @Test(arguments: unreadable.indices)
  func unreadableTextNamesTheLineAndColumnWithTheReason(_ index: Int) throws {
    let (document, message) = Self.unreadable[index]
    let deep = document.replacing("<DEEP>", with: String(repeating: "[", count: 100_000))
    let error = try Self.loadError(bytesWithFF(deep))
    #expect(error.contains(message), "case \(index): \(error)")
  }

  @Test func fieldsThatAreNotReplayedCannotMakeTheFileUnreadable() throws {
    let entry = Self.valid.replacing(#""time": 1"#, with: #""time": 1e999, "_note": "<FF>""#)
      .replacing(
        #""headers": [], "queryString""#,
        with: #""headers": [{"name": "X-Odd", "value": "\ud800"}, {"value": 3}], "queryString""#
      )
      .replacing(#""cookies": [], "headersSize": -1, "bodySize": -1}"#, with: #""cookies": 7}"#)
    let file = try HARFixtures.file("", named: "session.har")
    try bytesWithFF(HARFixtures.har(entry)).write(to: file)
    let mock = try URLSessionMock(
      replaying: file, mode: .replay, from: URLSessionMock(), environment: [:])
    #expect(HARFixtures.send(mock, "https://x.test/a").status == 200)
    #expect(try MockBundle(contentsOf: file).count == 1)
  }

  /// HAR's rule for a key given twice: the last one counts, as in JavaScript's `JSON.parse`.
  @Test func aKeyGivenTwiceCountsWithItsLastValue() throws {
    let twice = Self.valid.replacing(#""status": 200"#, with: #""status": 500, "status": 201"#)
    let (mock, _) = try HARFixtures.replaying(HARFixtures.har(twice))
    #expect(HARFixtures.send(mock, "https://x.test/a").status == 201)
  }

  @Test(arguments: [
    (#""text": """#, #""txet": "hello""#, "log.entries[0].response.content.txet", #""text""#),
    (#""status": 200"#, #""Status": 200"#, "log.entries[0].response.Status", #""status""#),
    (#""method": "GET""#, #""methd": "GET""#, "log.entries[0].request.methd", #""method""#),
    (
      #""mimeType": "text/plain""#, #""mimetype": "text/plain""#, "content.mimetype",
      #""mimeType""#
    ),
  ])
  func aMisspeltFieldThatLeavesOneMissingIsReported(
    _ field: String, _ misspelt: String, _ path: String, _ name: String
  ) throws {
    let document = HARFixtures.har(Self.valid.replacing(field, with: misspelt))
    let error = try Self.loadError(Data(document.utf8))
    #expect(error.contains(path) && error.contains("misspelling of \(name)"), "\(error)")
  }

  @Test func customFieldsAndKnownFieldsAreNoMisspellings() throws {
    let entry = Self.valid.replacing(
      #""text": """#, with: #""text": "", "_text": "x", "comment": "", "compression": 0"#)
    let (mock, _) = try HARFixtures.replaying(HARFixtures.har(entry))
    #expect(HARFixtures.send(mock, "https://x.test/a").status == 200)
  }
}
