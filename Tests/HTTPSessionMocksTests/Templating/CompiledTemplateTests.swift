import Foundation
import HTTPSessionKit
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Compiled templates read the request directly, and must render exactly what the renderer
/// renders with the request model: each case is rendered both ways and compared.
@Suite struct CompiledTemplateTests {
  struct Case: Sendable, CustomTestStringConvertible {
    let template: String
    let url: String
    let headers: [String: String]
    let body: String?

    init(_ template: String, url: String, headers: [String: String] = [:], body: String? = nil) {
      self.template = template
      self.url = url
      self.headers = headers
      self.body = body
    }

    var testDescription: String { template + " " + url + " " + (body ?? "") }
  }

  static let reads =
    "{{request.method}}|{{request.path}}|{{request.url}}|{{request.pathSegments.[0]}}|"
    + "{{request.pathSegments.[1]}}|{{request.pathSegments.[7]}}|{{request.query.q}}|"
    + "{{{request.query.q}}}|{{request.query.[a b]}}|{{request.headers.X-User}}|"
    + "{{request.headers.x-user}}|{{{request.body}}}"

  static let cases: [Case] = [
    Case(reads, url: "https://api.test/users/42?q=x", headers: ["X-User": "ada"], body: "b"),
    Case(
      reads, url: "http://h/a%20b/%C3%A9t%C3%A9/?q=1%2B1&q=2&x=&q&a+b=%3D%26",
      headers: ["x-user": "<ada & 'bob'>"], body: "<&>"),
    Case(reads, url: "http://h", headers: [:], body: nil),
    Case(reads, url: "http://h/?&&q=a=b=c&&", headers: ["X-USER": "u=1"], body: ""),
    Case(reads, url: "http://h//x//y?q", headers: [:], body: "\u{e9}"),
    Case(reads, url: "users/42?q=x", headers: [:], body: "relative"),
    Case(reads, url: "http://h?q=1", headers: [:], body: nil),
    Case("{{request.query.\u{212A}}}|{{request.query.K}}", url: "http://h/?K=kelvin&%4B=encoded"),
    Case("{{request.query.\u{e9}}}", url: "http://h/?%C3%A9=e&e=plain"),
    Case(
      "{{jsonPath request.body '$.name'}}", url: "http://h/", body: #"{"name": "Ada", "id": 42}"#),
    Case("{{jsonPath request.body '$.id'}}", url: "http://h/", body: #"{"name": "Ada", "id": 42}"#),
    Case(
      "{{jsonPath request.body '$.a.b'}}", url: "http://h/", body: #"{"a":{"b":1},"a":{"c":2}}"#),
    Case("{{jsonPath request.body '$.a.b'}}", url: "http://h/", body: #"{"a":{"b":1,"b":[2]}}"#),
    Case("{{jsonPath request.body '$.a[1]'}}", url: "http://h/", body: #"{"a":[1, 2.50, -0]}"#),
    Case("{{jsonPath request.body '$.a[2]'}}", url: "http://h/", body: #"{"a":[1, 2.50, -0.0]}"#),
    Case("{{jsonPath request.body '$.a[-1]'}}", url: "http://h/", body: #"{"a":[1, 2, 3]}"#),
    Case("{{jsonPath request.body '$.a[5]'}}", url: "http://h/", body: #"{"a":[1, 2, 3]}"#),
    Case(
      "{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":{"z":1,"b":[true,null]}}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":[1,"x",{"k":null}]}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":true,"b":null}"#),
    Case("{{jsonPath request.body '$.b'}}", url: "http://h/", body: #"{"a":true,"b":null}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":1e2}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":1e999}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":1,"b":1e999}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":"x\"y=\u00e9"}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":"caf\#u{e9}"}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":"x",}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: #"{"a":01}"#),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: "not json"),
    Case("{{jsonPath request.body '$.a'}}", url: "http://h/", body: ""),
    Case("{{jsonPath request.body '$'}}", url: "http://h/", body: " 7 "),
    Case("{{jsonPath request.body '$.\u{212A}'}}", url: "http://h/", body: #"{"K":"kelvin"}"#),
    Case(#"{{jsonPath request.body "$['a b']"}}"#, url: "http://h/", body: #"{"a b":"s"}"#),
    Case(
      "{{jsonPath request.body '$.a'}}{{jsonPath request.body '$.b'}}", url: "http://h/",
      body: #"{"a":"<","b":"'"}"#),
  ]

  @Test(arguments: cases)
  func rendersAsTheRenderer(_ given: Case) throws {
    let nodes = try TemplateParser.parse(given.template)
    let compiled = try #require(CompiledTemplate(nodes))
    var request = URLRequest(url: try #require(URL(string: given.url)))
    request.httpMethod = given.body == nil ? "GET" : "post"
    for (name, value) in given.headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = given.body.map { Data($0.utf8) }
    var environment = TemplateEnvironment(now: Date(), random: SeededRandom(seed: 0))
    let expected: String
    do {
      expected = try TemplateRenderer.render(
        nodes, context: TemplateRequestModel.context(for: request), environment: &environment)
    } catch {
      // What fails (jsonPath over an empty body) is left to the renderer, which says why.
      #expect(compiled.render(for: request, maxOutputBytes: 1 << 20) == nil)
      return
    }
    let rendered = try #require(compiled.render(for: request, maxOutputBytes: 1 << 20))
    #expect(String(decoding: rendered, as: UTF8.self) == expected)
    // What routing read of the request, handed over: the same text.
    let sent = RequestFacts(request)
    #expect(compiled.render(for: request, sent: sent, maxOutputBytes: 1 << 20) == rendered)
  }

  @Test func aBodyThatIsNotUTF8IsReadAsTheModelRepairsIt() throws {
    let nodes = try TemplateParser.parse(
      "{{jsonPath request.body '$.a'}}|{{jsonPath request.body '$.b'}}|{{{request.body}}}")
    let compiled = try #require(CompiledTemplate(nodes))
    var request = URLRequest(url: try #require(URL(string: "http://h/")))
    request.httpMethod = "POST"
    request.httpBody = Data(#"{"a":"x"#.utf8) + Data([0xFF, 0xC3]) + Data(#"","b":1}"#.utf8)
    var environment = TemplateEnvironment(now: Date(), random: SeededRandom(seed: 0))
    let expected = try TemplateRenderer.render(
      nodes, context: TemplateRequestModel.context(for: request), environment: &environment)
    #expect(expected.contains("\u{FFFD}"))
    let rendered = try #require(compiled.render(for: request, maxOutputBytes: 1 << 20))
    #expect(String(decoding: rendered, as: UTF8.self) == expected)
  }

  @Test func aRepeatedRenderingSharesTheLastAnswerAndANewOneMakesItsOwn() throws {
    let response = StubResponse.text("{{request.query.q}}").templated()
    func answer(_ url: String, method: String = "GET") throws -> Answer {
      var request = URLRequest(url: try #require(URL(string: url)))
      request.httpMethod = method
      guard case .answer(let answer) = response.resolve(for: request, now: Date()) else {
        Issue.record("no answer for \(url)")
        throw CancellationError()
      }
      return answer
    }
    let first = try answer("http://h/a?q=one")
    let again = try answer("http://h/a?q=one")
    // Each answer stays in the journal: the same bytes are one answer, not one per request.
    #expect(first === again)
    #expect(first.data == Data("one".utf8))
    let other = try answer("http://h/a?q=two")
    #expect(other !== first)
    #expect(other.data == Data("two".utf8))
    let head = try answer("http://h/a?q=two", method: "HEAD")
    #expect(head !== other)
    #expect(head.data == Data())
    #expect(try answer("http://h/a?q=two").data == Data("two".utf8))
    let elsewhere = try answer("http://h/b?q=two")
    #expect(elsewhere.response?.url?.path == "/b")
    #expect(elsewhere.data == Data("two".utf8))
  }

  @Test func theBenchmarksTemplateCompiles() throws {
    let template =
      #"{"method": "{{request.method}}", "path": "{{request.path}}", "#
      + #""id": "{{request.pathSegments.[1]}}", "q": "{{request.query.q}}", "#
      + #""user": "{{request.headers.X-User}}", "name": "{{jsonPath request.body '$.name'}}"}"#
    let compiled = try #require(CompiledTemplate(try TemplateParser.parse(template)))
    #expect(compiled.pieces.count == 13)
  }

  @Test func templatesThatNeedTheRendererDoNotCompile() throws {
    for template in [
      "{{#if request.path}}x{{/if}}", "{{request}}", "{{request.headers.Host}}",
      "{{request.query}}", "{{upper request.path}}", "{{jsonPath request.body '$..a'}}",
      "{{jsonPath request.body '$.a' default='x'}}", "{{request.pathSegments.[x]}}",
      "{{now}}",
    ] {
      #expect(CompiledTemplate(try TemplateParser.parse(template)) == nil, "\(template)")
    }
  }

  @Test func outputOverTheLimitIsLeftToTheRenderer() throws {
    let compiled = try #require(CompiledTemplate(try TemplateParser.parse("ab{{request.path}}")))
    let request = URLRequest(url: try #require(URL(string: "http://h/long")))
    #expect(compiled.render(for: request, maxOutputBytes: 6) == nil)
    #expect(compiled.render(for: request, maxOutputBytes: 7) == Array("ab/long".utf8))
  }

  @Test func aScanFindsTheLastOfARepeatedKeyAndIsUnsureOfWhatItDoesNotRead() {
    func scan(_ body: String, _ steps: [JSONPath.DefiniteStep]) -> String {
      var body = body
      return body.withUTF8 { bytes in
        switch JSONBodyScan.scan(bytes, for: steps) {
        case .nothing: return "nothing"
        case .unsure: return "unsure"
        case .scalar(let range): return String(decoding: bytes[range], as: UTF8.self)
        }
      }
    }
    #expect(scan(#"{"a":1,"a":2}"#, [.member("a")]) == "2")
    #expect(scan(#"{"a":{"b":1},"a":{}}"#, [.member("a"), .member("b")]) == "nothing")
    #expect(scan(#"[0, [1, "two"]]"#, [.index(1), .index(1)]) == #""two""#)
    #expect(scan(#"{"a":{"b":1}}"#, [.member("a")]) == "unsure")
    #expect(scan(#"{"a":"\n"}"#, [.member("a")]) == "unsure")
    #expect(scan(#"{"a":1} x"#, [.member("a")]) == "unsure")
    #expect(scan(#"{"a":1e5}"#, [.member("b")]) == "unsure")
  }
}
