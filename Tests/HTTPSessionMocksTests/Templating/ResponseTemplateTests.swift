import Foundation
import HTTPSessionKit
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Templated responses: written in Swift, read from WireMock mappings, on the mock's clock and
/// random source, and bounded.
@Suite struct ResponseTemplateTests {
  func text(_ mock: URLSessionMock, _ url: String, body: String? = nil) async throws -> String {
    var request = URLRequest(url: try #require(URL(string: url)))
    if let body {
      request.httpMethod = "POST"
      request.httpBody = Data(body.utf8)
    }
    return String(decoding: try await mock.data(for: request).0, as: UTF8.self)
  }

  @Test func aSwiftStubTemplatesItsBodyAndHeaders() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .post("/orders"),
      with: .text(
        "{{jsonPath request.body '$.id'}} for {{request.headers.X-User}}", status: 201,
        headers: ["Location": "/orders/{{jsonPath request.body '$.id'}}"]
      ).templated())
    var request = URLRequest(url: try #require(URL(string: "https://api.test/orders")))
    request.httpMethod = "POST"
    request.setValue("ada", forHTTPHeaderField: "X-User")
    request.httpBody = Data(#"{"id": 12}"#.utf8)
    let (data, response) = try await mock.data(for: request)
    #expect(String(decoding: data, as: UTF8.self) == "12 for ada")
    #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Location") == "/orders/12")
  }

  @Test func withoutTemplatedBracesAreText() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/plain"), with: .text("{{request.path}}"))
    #expect(try await text(mock, "https://api.test/plain") == "{{request.path}}")
  }

  @Test func aTemplatedFileNameChoosesTheFixture() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/users/{name}"),
      with: .file("Fixtures/{{request.pathSegments.[1]}}.json", in: .module).templated())
    let body = try await text(mock, "https://api.test/users/user")
    #expect(body.contains("octocat"))
  }

  @Test func nowReadsTheVirtualClockFromItsStartDate() async throws {
    let start = try #require(ISO8601DateFormatter().date(from: "2026-03-01T23:30:00Z"))
    let clock = VirtualClock(startDate: start)
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/now"),
      with: .text("{{now format='yyyy-MM-dd HH:mm'}}|{{now offset='-1 days' format='yyyy-MM-dd'}}")
        .templated())
    #expect(try await text(mock, "https://api.test/now") == "2026-03-01 23:30|2026-02-28")
    await clock.advance(by: .seconds(3600))
    #expect(try await text(mock, "https://api.test/now") == "2026-03-02 00:30|2026-03-01")
  }

  @Test func aClockWithoutAStartDateStartsIn2000() async throws {
    let mock = URLSessionMock(clock: VirtualClock())
    mock.stub(.get("/now"), with: .text("{{now}}").templated())
    #expect(try await text(mock, "https://api.test/now") == "2000-01-01T00:00:00Z")
  }

  @Test func randomValuesRepeatFromRunToRun() async throws {
    func values(seed: UInt64) async throws -> [String] {
      let mock = URLSessionMock()
      mock.stub(
        .get("/r"),
        with: .text("{{randomValue length=12}}|{{pickRandom 'a' 'b' 'c' 'd' 'e' 'f'}}").templated(
          seed: seed))
      var result: [String] = []
      for _ in 0..<3 { result.append(try await text(mock, "https://api.test/r")) }
      return result
    }
    let first = try await values(seed: 7)
    #expect(try await values(seed: 7) == first)
    #expect(try await values(seed: 8) != first)
    #expect(Set(first).count == 3)
  }

  @Test func outputBeyondTheBodyLimitFailsWithAReport() async throws {
    let mock = URLSessionMock()
    // 20 × 20 × 20 × 20 turns of a 20 KB string: 3.2 GB if it were not stopped.
    let nested =
      "{{#each request.query.a}}{{#each request.query.a}}{{#each request.query.a}}"
      + "{{#each request.query.a}}{{request.body}}{{/each}}{{/each}}{{/each}}{{/each}}"
    mock.stub(.post("/big"), with: .text(nested).templated())
    let query = (0..<20).map { _ in "a=1" }.joined(separator: "&")
    await expectReport(containing: "response body limit") {
      await #expect(throws: URLError.self) {
        _ = try await text(
          mock, "https://api.test/big?" + query, body: String(repeating: "x", count: 20_000))
      }
    }
  }

  @Test func aTemplateThatDoesNotParseFailsTheRequestWithItsPosition() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/bad"), with: .text("ok\n{{#if request.query.a}}").templated())
    await expectReport(containing: "line 2, column 1", "never closed") {
      await #expect(throws: URLError.self) { _ = try await text(mock, "https://api.test/bad") }
    }
  }

  @Test func wireMockMappingsLoadWithNotesForUnknownTransformersAndBadTemplates() async throws {
    let root = try makeTemporaryFolder()
    defer { removeFolder(root) }
    try writeFile(
      #"{"request": {"urlPath": "/ext"}, "response": {"body": "plain", "transformers": ["body-transformer", "response-template"], "transformerParameters": {"who": "wm"}}}"#,
      "mappings/ext.json", in: root)
    try writeFile(
      #"{"request": {"urlPath": "/bad"}, "response": {"body": "{{#each x}}", "transformers": ["response-template"]}}"#,
      "mappings/bad.json", in: root)
    try writeFile(
      #"{"request": {"urlPath": "/param"}, "response": {"body": "hi {{parameters.who}}", "transformers": ["response-template"], "transformerParameters": {"who": "wm"}}}"#,
      "mappings/param.json", in: root)
    let bundle = try MockBundle(contentsOf: root)
    #expect(bundle.count == 3)
    #expect(bundle.notes.count == 2)
    #expect(
      bundle.notes.contains {
        $0.contains("bad.json") && $0.contains("response") && $0.contains("line 1, column 1")
      })
    #expect(
      bundle.notes.contains { $0.contains("ext.json") && $0.contains("\"body-transformer\"") })
    // A mock that loads the bundle says each note once, as a warning; the request that uses
    // the bad template fails with the parse error.
    let reports = try await capturedReports { () async throws -> Void in
      let mock = URLSessionMock(bundle: bundle)
      #expect(try await text(mock, "https://api.test/ext") == "plain")
      #expect(try await text(mock, "https://api.test/param") == "hi wm")
      await #expect(throws: URLError.self) { _ = try await text(mock, "https://api.test/bad") }
    }
    let warnings = reports.filter { $0.severity == .warning }.map(\.message)
    #expect(warnings.count == 2)
    #expect(warnings.contains { $0.contains("ext.json") && $0.contains("\"body-transformer\"") })
    #expect(warnings.contains { $0.contains("bad.json") && $0.contains("line 1, column 1") })
    let failures = reports.filter { $0.severity == .failure }.map(\.message)
    #expect(failures.count == 1)
    #expect(failures.first?.contains("never closed") == true)
  }

  @Test func globalTemplatingTemplatesEveryMapping() async throws {
    let root = try makeTemporaryFolder()
    defer { removeFolder(root) }
    try writeFile(
      #"{"request": {"urlPath": "/g"}, "response": {"jsonBody": {"path": "{{request.path}}"}}}"#,
      "mappings/g.json", in: root)
    let plain = URLSessionMock(bundle: try MockBundle(contentsOf: root))
    #expect(try await text(plain, "https://api.test/g") == #"{"path":"{{request.path}}"}"#)
    let global = URLSessionMock(bundle: try MockBundle(contentsOf: root).templatingEveryResponse())
    #expect(try await text(global, "https://api.test/g") == #"{"path":"/g"}"#)
  }

  /// Found by the template fuzz target: corelibs' DateFormatter trapped reading this date.
  @Test func aDateThatIsNotASCIIIsNoDate() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/d"), with: .text("{{parseDate '2\u{65D}\u{FFFD}020-01-02T03:04:05Z'}}").templated())
    await expectReport(containing: "is not a date") {
      await #expect(throws: URLError.self) { _ = try await text(mock, "https://api.test/d") }
    }
  }

  /// Found by the template fuzz target: a number too large for an `Int` trapped converting.
  @Test func hugeNumbersInHelpersDoNotTrap() async throws {
    let huge = String(repeating: "9", count: 40)
    let failing = [
      ("{{substring 'abc' \(huge)}}", "substring"),
      ("{{date (parseDate '\(huge)' format='epoch') format='epoch'}}", "is not a date"),
      ("{{randomValue length=\(huge)}}", "randomValue length=2147483647 is out of range"),
    ]
    for (index, (template, report)) in failing.enumerated() {
      let mock = URLSessionMock()
      mock.stub(.get("/n\(index)"), with: .text(template).templated())
      await expectReport(containing: report) {
        await #expect(throws: URLError.self) {
          _ = try await text(mock, "https://api.test/n\(index)")
        }
      }
    }
    let mock = URLSessionMock()
    mock.stub(
      .get("/m"),
      with: .text(
        "{{randomInt lower=-\(huge) upper=\(huge)}}|{{rjust 'x' \(huge) pad='-'}}|{{isOdd \(huge)}}"
      ).templated())
    #expect(try await text(mock, "https://api.test/m").hasSuffix("-x|odd"))
  }

  @Test func escapingIsHandlebarsJavas() {
    #expect(TemplateRenderer.escape("&<>\"'`=x") == "&amp;&lt;&gt;&quot;&#x27;&#x60;&#x3D;x")
  }
}
