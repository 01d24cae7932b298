import Foundation
import HTTPSessionKit
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Templates and requests whose answers were measured on the real WireMock 2.35.1 jar
/// (`--local-response-templating`, a mapping `{"request": {"method": "ANY", "urlPathPattern":
/// "/.*"}, "response": {"transformers": ["response-template"], "body": TEMPLATE}}`, the request
/// sent to http://127.0.0.1:57343 with Python's urllib), each expected body copied from its answer.
@Suite struct TemplateMeasuredTests {
  struct Case: Sendable, CustomTestStringConvertible {
    let template: String
    let path: String
    let method: String
    let headers: [String: String]
    let body: String?
    let expected: String

    init(
      _ template: String, path: String, method: String, headers: [String: String], body: String?,
      expected: String
    ) {
      self.template = template
      self.path = path
      self.method = method
      self.headers = headers
      self.body = body
      self.expected = expected
    }

    var testDescription: String { template }
  }

  static let cases: [Case] = [
    Case(
      "{{#eq request.query.a 'x'}}Y{{else}}N{{/eq}}", path: "/t?a=x", method: "GET", headers: [:],
      body: nil,
      expected: "N"),
    Case(
      "{{#eq request.query.a 'x'}}Y{{else}}N{{/eq}}", path: "/t?a=y", method: "GET", headers: [:],
      body: nil,
      expected: "N"),
    Case(
      "{{eq request.query.a 'x'}}|{{neq request.query.a 'x'}}", path: "/t?a=x", method: "GET",
      headers: [:], body: nil,
      expected: "false|true"),
    Case(
      "{{#neq request.query.a 'x'}}Y{{else}}N{{/neq}}", path: "/t?a=x", method: "GET", headers: [:],
      body: nil,
      expected: "Y"),
    Case(
      "{{#contains request.query.a 'bc'}}Y{{else}}N{{/contains}}|{{contains 'abcd' 'bc'}}",
      path: "/t?a=abcd", method: "GET", headers: [:], body: nil,
      expected: "|true"),
    Case(
      "{{#eq 1 1}}Y{{/eq}}|{{#eq '1' 1}}Y{{else}}N{{/eq}}|{{#eq (jsonPath request.body '$.i') 7}}Y{{else}}N{{/eq}}|{{#eq (jsonPath request.body '$.s') 'x'}}Y{{else}}N{{/eq}}",
      path: "/t", method: "POST", headers: [:], body: "{\"i\":7,\"s\":\"x\"}",
      expected: "Y|N|Y|Y"),
    Case(
      "{{#if 0}}Y{{else}}N{{/if}}|{{#if ''}}Y{{else}}N{{/if}}|{{#if 'false'}}Y{{else}}N{{/if}}|{{#if request.query.none}}Y{{else}}N{{/if}}|{{#unless request.query.none}}U{{/unless}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "N|N|Y|N|U"),
    Case(
      "{{#gt 2 1}}Y{{else}}N{{/gt}}|{{#lt 2 1}}Y{{else}}N{{/lt}}|{{#and true false}}Y{{else}}N{{/and}}|{{#or true false}}Y{{else}}N{{/or}}|{{#not false}}Y{{else}}N{{/not}}|{{gte 2 2}}|{{lte 3 2}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "Y|N|N|Y|Y|true|false"),
    Case(
      "{{size 'abc'}}|{{size (jsonPath request.body '$.a')}}|{{size (jsonPath request.body '$.o')}}|{{size request.pathSegments}}",
      path: "/x/y/z", method: "POST", headers: [:], body: "{\"a\":[1,2],\"o\":{\"k\":1}}",
      expected: "3|2|1|3"),
    Case(
      "{{regexExtract request.path '[a-z]+'}}|{{regexExtract request.path '([a-z]+)/([0-9]+)' 'parts'}}{{parts.0}}-{{parts.1}}",
      path: "/abc/123", method: "GET", headers: [:], body: nil,
      expected: "abc|abc-123"),
    Case(
      "{{base64 'hello'}}|{{base64 'aGVsbG8=' decode=true}}|{{urlEncode 'a b&c'}}|{{urlEncode 'a+b%20' decode=true}}|{{base64 'hi' padding=false}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "aGVsbG8&#x3D;|hello|a+b%26c|a b |aGk"),
    Case(
      "{{math 1 '+' 2}}|{{math 7 '/' 2}}|{{math 7 '%' 3}}|{{math 2 '*' 3.5}}|{{math 1.5 '-' 2}}|{{math '10' '/' '4'}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "3|4|1|7.0|-0.5|3"),
    Case(
      "[{{#trim}}  x y  {{/trim}}]|[{{trim '  z '}}]", path: "/t", method: "GET", headers: [:],
      body: nil,
      expected: "[x y]|[z]"),
    Case(
      "{{#each request.pathSegments}}{{@index}}:{{this}}{{#if @first}}F{{/if}}{{#if @last}}L{{/if}},{{/each}}|{{#each (jsonPath request.body '$.e')}}x{{else}}empty{{/each}}",
      path: "/a/b/c", method: "POST", headers: [:], body: "{\"o\":{\"k\":1,\"j\":\"v\"},\"e\":[]}",
      expected: "0:aF,1:b,2:cL,|empty"),
    Case(
      "{{request.url}}|{{request.path}}|{{request.baseUrl}}|{{request.method}}|{{request.requestLine.baseUrl}}|{{request.requestLine.scheme}}|{{request.requestLine.host}}|{{request.requestLine.port}}|{{request.requestLine.path}}|{{request.requestLine.query.a}}|{{request.requestLine.method}}|{{request.requestLine.url}}|{{request.requestLine.pathSegments.[0]}}|{{request.pathSegments.[1]}}|{{request.pathSegments.1}}",
      path: "/p/q?a=1&b=2", method: "GET", headers: [:], body: nil,
      expected:
        "/p/q?a&#x3D;1&amp;b&#x3D;2|/p/q|http://127.0.0.1:57343|GET|http://127.0.0.1:57343|http|127.0.0.1|57343|/p/q|1|GET|/p/q?a&#x3D;1&amp;b&#x3D;2|p|q|q"
    ),
    Case(
      "{{request.cookies.c}}|{{request.headers.x-id}}|{{request.headers.[X-Id]}}|{{request.headers.Accept}}",
      path: "/t", method: "GET", headers: ["Cookie": "c=v1; d=v2", "X-Id": "42", "Accept": "a/b"],
      body: nil,
      expected: "v1|42|42|a/b"),
    Case(
      "{{capitalize 'hello world'}}|{{capitalizeFirst 'hello world'}}|{{abbreviate 'hello world' 8}}|{{defaultIfEmpty '' 'd'}}|{{defaultIfEmpty 'x' 'd'}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "Hello World|Hello world|hello...|d|x"),
    Case(
      "{{join 'a' 'b' 'c' ', '}}|{{join (jsonPath request.body '$.a') '-'}}|{{join request.pathSegments '/'}}",
      path: "/x/y", method: "POST", headers: [:], body: "{\"a\":[1,2,3]}",
      expected: "a, b, c|1-2-3|x/y"),
    Case(
      "{{replace 'aXbX' 'X' 'y'}}|{{stripTags '<b>x</b>'}}|{{substring 'abcdef' 1 3}}|{{substring 'abcdef' 2}}|{{cut 'a b c'}}|{{slugify 'Hello World!'}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "ayby|x|bc|cdef|abc|hello-world"),
    Case(
      "{{date (parseDate '2020-01-31T10:00:00Z') offset='1 months' format='yyyy-MM-dd'}}|{{date (parseDate '2020-01-02T03:04:05Z') format='yyyy-MM-dd HH:mm'}}|{{date (parseDate '2020-01-02T03:04:05Z') format='epoch'}}|{{date (parseDate '2020-01-02T03:04:05Z') format='unix'}}|{{date (parseDate '2020-01-02T03:04:05Z') offset='-3 days' timezone='Europe/Paris' format='yyyy-MM-dd HH:mm'}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "2020-02-29|2020-01-02 03:04|1577934245000|1577934245|2019-12-30 03:04"),
    Case(
      "{{parseDate '2020-01-02T03:04:05Z'}}|{{date (parseDate '2020-01-02T03:04:05Z')}}|{{date (parseDate '02/01/2020' format='dd/MM/yyyy') format='yyyy-MM-dd'}}|{{date (parseDate '1577934245000' format='epoch') format='yyyy'}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "2020-01-02T03:04:05Z|2020-01-02T03:04:05Z|2020-01-02|2020"),
    Case(
      "{{dateFormat (parseDate '2020-01-02T03:04:05Z') format='yyyy'}}|{{dateFormat (parseDate '2020-01-02T03:04:05Z') 'yyyy-MM'}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "2020|2020-01"),
    Case(
      "{{#assign 'x'}} a b {{/assign}}[{{x}}]|{{assign 'y' 'z'}}", path: "/t", method: "GET",
      headers: [:], body: nil,
      expected: "[a b]|"),
    Case(
      "{{#matches 'abc' '[a-c]+'}}Y{{else}}N{{/matches}}|{{matches 'abcd' 'b'}}", path: "/t",
      method: "GET", headers: [:], body: nil,
      expected: "Y|false"),
    Case(
      "{{jsonPath request.body '$.x'}}", path: "/t", method: "POST", headers: [:], body: "not json",
      expected: ""),
    Case(
      "{{#with (jsonPath request.body '$.u')}}{{name}}/{{age}}{{/with}}|{{lookup request.query 'a'}}|{{#each (jsonPath request.body '$.l')}}{{name}},{{/each}}",
      path: "/t?a=1", method: "POST", headers: [:],
      body: "{\"u\":{\"name\":\"N\",\"age\":3},\"l\":[{\"name\":\"p\"},{\"name\":\"q\"}]}",
      expected: "N/3|1|p,q,"),
    Case(
      "{{#if request.query.a}}A{{else if request.query.b}}B{{else}}C{{/if}}", path: "/t?b=1",
      method: "GET", headers: [:], body: nil,
      expected: "B"),
    Case(
      "{{math 10 '/' 4}}|{{math 10.0 '/' 4}}|{{math 1 '-' 3}}|{{math (jsonPath request.body '$.n') '*' 2}}|{{math 5 '%' 2}}",
      path: "/t", method: "POST", headers: [:], body: "{\"n\":2.5}",
      expected: "3|2.5|-2|5.0|1"),
    Case(
      "{{numberFormat 1234.5678 'integer'}}|{{numberFormat 0.25 'percent'}}|{{stringFormat '%s-%d' 'a' 3}}|{{isOdd 3}}|{{#isEven 4}}E{{/isEven}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "1,235|25%|a-3|odd|even"),
    Case(
      "{{request.query.a}}|{{request.query.b}}|{{request.query.c}}|{{request.pathSegments}}|{{request.query.a.[0]}}",
      path: "/x%20y/z?a=1+2&b=%26&c", method: "GET", headers: [:], body: nil,
      expected: "1 2|&amp;||/x y/z|1 2"),
    Case(
      "{{upper request.body}}", path: "/t", method: "PUT", headers: [:], body: "ab<",
      expected: "AB&lt;"),
    Case(
      "{{formData request.body 'f'}}{{f.a}}|{{f.b.[1]}}", path: "/t", method: "POST", headers: [:],
      body: "a=1&b=x&b=y",
      expected: "1|y"),
    Case(
      "{{#each (jsonPath request.body '$.a')}}{{this}}{{#unless @last}},{{/unless}}{{/each}}|{{#each request.query.x}}{{@index}}{{/each}}",
      path: "/t?x=1&x=2", method: "POST", headers: [:], body: "{\"a\":[1,2]}",
      expected: "1,2|01"),
    Case(
      "{{#eq request.method 'POST'}}post{{/eq}}|{{#eq request.pathSegments.[0] 'x'}}x{{/eq}}",
      path: "/x", method: "POST", headers: [:], body: "",
      expected: "|x"),
    Case(
      "{{rjust 'x' size=4 pad='-'}}|{{ljust 'x' size=4 pad='-'}}|{{center 'x' size=5 pad='*'}}|{{yesno true}}|{{yesno false}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "---x|x---|**x**|yes|no"),
    Case(
      "{{! comment }}x{{!-- long }} --}}y|\\{{raw}}| {{~request.method~}} |", path: "/t",
      method: "GET", headers: [:], body: nil,
      expected: "xy|{{raw}}| GET |"),
    Case(
      "a\n  {{~#if true~}}\n  b\n  {{~/if~}}\nc", path: "/t", method: "GET", headers: [:],
      body: nil,
      expected: "a\n  b\nc"),
    Case(
      "{{parseJson '{\"a\":1}' 'v'}}{{v.a}}", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "1"),
    Case(
      "{{#contains 'abcd' 'bc'}}Y{{else}}N{{/contains}}|{{#contains 'abcd' 'zz'}}Y{{else}}N{{/contains}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "Y|"),
    Case(
      "{{regexExtract 'abc' 'x'}}|{{regexExtract 'abc' 'x' default='D'}}|{{regexExtract 'a1b2' '([a-z])([0-9])' 'g'}}{{g}}|{{g.0}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "[ERROR: Nothing matched x]|D|a|a"),
    Case(
      "{{request.method}}|{{#eq request.requestLine.method 'GET'}}Y{{else}}N{{/eq}}", path: "/t",
      method: "GET", headers: [:], body: nil,
      expected: "GET|N"),
    Case(
      "{{{request.query.q}}}|{{& request.query.q}}", path: "/t?q=%3C%3E", method: "GET",
      headers: [:], body: nil,
      expected: "<>|<>"),
    Case(
      "{{request.requestLine.query}}|{{request.query.a}}", path: "/t?a=1&a=2&b=3", method: "GET",
      headers: [:], body: nil,
      expected: "{a&#x3D;1, b&#x3D;3}|1"),
    Case(
      "{{#if (jsonPath request.body '$.e')}}Y{{else}}N{{/if}}|{{#if (jsonPath request.body '$.z')}}Y{{else}}N{{/if}}",
      path: "/t", method: "POST", headers: [:], body: "{\"e\":[],\"z\":0}",
      expected: "N|N"),
    Case(
      "{{#unless false}}U{{else}}E{{/unless}}|{{#if true}}{{else}}{{/if}}|{{^request.query.none}}inv{{/request.query.none}}",
      path: "/t", method: "GET", headers: [:], body: nil,
      expected: "U||inv"),
    Case(
      "{{#with request}}{{method}}{{/with}}|{{#each request.pathSegments}}{{../request.method}}{{/each}}",
      path: "/a", method: "GET", headers: [:], body: nil,
      expected: "GET|GET"),
    Case(
      "{{request.body}}", path: "/t", method: "POST", headers: [:], body: "line1\nline2 & 'q'",
      expected: "line1\nline2 &amp; &#x27;q&#x27;"),
    Case(
      "{{lower 'ÀB'}}|{{upper 'straße'}}", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "àb|STRASSE"),
    Case(
      "{{trim '  x  '}}|{{base64 'é'}}|{{urlEncode 'é/?'}}", path: "/t", method: "GET",
      headers: [:], body: nil,
      expected: "x|w6k&#x3D;|%C3%A9%2F%3F"),
    Case(
      "a\n{{#if true}}\nb\n{{/if}}\nc", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "a\n\nb\n\nc"),
    Case(
      "a\n  {{! note }}\nb", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "a\n  \nb"),
    Case(
      "a\n{{#if false}}\nx\n{{else}}\ny\n{{/if}}\nz", path: "/t", method: "GET", headers: [:],
      body: nil,
      expected: "a\n\ny\n\nz"),
    Case(
      "a {{#if true}}\nb\n{{/if}} c", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "a \nb\n c"),
    Case(
      "{{#each request.pathSegments}}\n- {{this}}\n{{/each}}\nend", path: "/p/q", method: "GET",
      headers: [:], body: nil,
      expected: "\n- p\n\n- q\n\nend"),
    Case(
      "x\r\n{{#if true}}\r\ny\r\n{{/if}}\r\nz", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "x\r\n\r\ny\r\n\r\nz"),
    Case(
      "{{#if true}}\nb\n{{/if}}", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "\nb\n"),
    Case(
      "  {{#if true}}  \nb\n\t{{/if}}\n", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "    \nb\n\t\n"),
    Case(
      "a\n{{#assign 'v'}}1{{/assign}}\nb{{v}}", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "a\n\nb1"),
    Case(
      "a\n{{request.method}}\nb", path: "/t", method: "GET", headers: [:], body: nil,
      expected: "a\nGET\nb"),
    Case(
      "{{~request.method}} x {{request.method~}} y", path: "/t", method: "GET", headers: [:],
      body: nil,
      expected: "GET x GET y"),
  ]

  /// `jsonPath` over a body that is empty, or JSON's `null`, fails the request in WireMock
  /// 2.35.1 (500: "json string can not be null or empty", "json can not be null"), a
  /// `default` notwithstanding; over a blank body, or one that is not JSON, it gives nothing
  /// (200). Both measured on the jar, through the compiled template and the renderer (the
  /// `#if` makes the second).
  @Test(arguments: [
    ("{{jsonPath request.body '$.name'}}", ""),
    ("{{jsonPath request.body '$.name' default='d'}}", ""),
    ("{{jsonPath request.body '$'}}", "null"),
    ("{{jsonPath request.body '$.a'}}", " null "),
    ("{{#if true}}{{jsonPath request.body '$.name'}}{{/if}}", ""),
    ("{{#if true}}{{jsonPath request.body '$'}}{{/if}}", "null"),
  ])
  func jsonPathOverAnEmptyOrNullBodyFailsTheRequest(template: String, body: String) async throws {
    let mock = try Self.mock("name=" + template)
    var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:57343/jp")))
    request.httpMethod = "POST"
    request.httpBody = Data(body.utf8)
    await expectReport(containing: "jsonPath", body.isEmpty ? "is empty" : "is null") {
      await #expect(throws: URLError.self) { _ = try await mock.data(for: request) }
    }
    // A blank body, or one that is not JSON, or that holds no name: nothing, or the default.
    guard !template.contains("'$'") else { return }
    for blank in [" ", "notjson", "[null]"] {
      request.httpBody = Data(blank.utf8)
      let (data, _) = try await mock.data(for: request)
      let expected = template.contains("default") ? "name=d" : "name="
      #expect(String(decoding: data, as: UTF8.self) == expected, "\(blank)")
    }
  }

  /// A mock answering every request with `template`, read from a WireMock mapping.
  static func mock(_ template: String) throws -> URLSessionMock {
    var text = ""
    JSONWriter.quote(template, into: &text)
    let mapping = try WireMockMapping(
      json: Data(
        (#"{"request": {"method": "ANY", "urlPathPattern": "/.*"}, "response": {"status": 200, "#
          + #""transformers": ["response-template"], "body": "# + text + "}}").utf8),
      source: "measured.json")
    let mock = URLSessionMock()
    mock.load(MockBundle(entries: [mapping.entry], firstMatchWins: false))
    return mock
  }

  @Test(arguments: cases)
  func answersAsWireMockDid(_ given: Case) async throws {
    let mock = try Self.mock(given.template)
    var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:57343" + given.path)))
    request.httpMethod = given.method
    for (name, value) in given.headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = given.body.map { Data($0.utf8) }
    let (data, response) = try await mock.data(for: request)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect(String(decoding: data, as: UTF8.self) == given.expected)
  }
}
