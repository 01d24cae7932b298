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
      "{ this is not json", "session.har: expected a HAR document (JSON), got text that is not JSON"
    ),
    ("[]", "session.har: expected an object, got an array"),
    (#"{"log": 3}"#, "session.har: log: expected an object, got the number 3"),
    (#"{"log": {"version": "1.2"}}"#, "log.entries: expected an array, got nothing (missing)"),
    (#"{"log": {"entries": {}}}"#, "log.entries: expected an array, got an object"),
    (HARFixtures.har(valid, "17"), "log.entries[1]: expected an object, got the number 17"),
    (
      HARFixtures.har(valid, valid.replacing(#""status": 200"#, with: #""status": "abc""#)),
      #"session.har: log.entries[1].response.status: expected a number, got "abc""#
    ),
    (
      HARFixtures.har(valid.replacing(#""status": 200"#, with: #""status": true"#)),
      "log.entries[0].response.status: expected a number, got true"
    ),
    (
      HARFixtures.har(valid.replacing(#""status": 200"#, with: #""status": 200.5"#)),
      "log.entries[0].response.status: expected a whole number, got the number 200.5"
    ),
    (
      HARFixtures.har(valid.replacing(#""status": 200"#, with: #""status": 1000"#)),
      "log.entries[0].response.status: expected an HTTP status from 100 to 999 (or 0)"
    ),
    (
      HARFixtures.har(valid.replacing(#""method": "GET""#, with: #""method": null"#)),
      "log.entries[0].request.method: expected a string, got null"
    ),
    (
      HARFixtures.har(valid.replacing(#""method": "GET""#, with: #""method": "G ET""#)),
      #"log.entries[0].request.method: expected an HTTP method, got "G ET""#
    ),
    (
      HARFixtures.har(valid.replacing("https://x.test/a", with: "/relative/path")),
      #"log.entries[0].request.url: expected an absolute URL with a scheme and a host, got "/relative/path""#
    ),
    (
      HARFixtures.har(valid.replacing(#""request": {"#, with: #""request": 1, "x": {"#)),
      "log.entries[0].request: expected an object, got the number 1"
    ),
    (
      HARFixtures.har(
        valid.replacing(
          #""status": 200, "statusText": "", "httpVersion": "HTTP/1.1", "headers": []"#,
          with: #""status": 200, "headers": [{"name": "A", "value": "1"}, {"value": "x"}]"#)),
      "log.entries[0].response.headers[1].name: expected a string, got nothing (missing)"
    ),
    (
      HARFixtures.har(
        valid.replacing(#""text": """#, with: #""text": "%%%", "encoding": "base64""#)),
      #"log.entries[0].response.content.text: expected base64 (the encoding says so), got "%%%""#
    ),
    (
      HARFixtures.har(valid.replacing(#""text": """#, with: #""text": "x", "encoding": "rot13""#)),
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
}
