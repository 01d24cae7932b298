import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Response templating over the loopback server, as WireMock 2.35.1 serves it (measured on the
/// jar): a template that fails answers 500, global templating reaches mappings added through
/// the admin API, and a templated `proxyBaseUrl` picks its upstream per request.
@Suite struct ServedTemplateTests {
  /// A `GET` of `path` on a fresh connection to `server`, read whole (the status line, the
  /// head and the body); the server's reports land in the calling scope.
  private func rawGet(_ path: String, from server: LoopbackServer, headers: String = "")
    throws -> String
  {
    let client = try RawClient(port: try #require(server.baseURL.port))
    client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n")
    return client.readToEnd()
  }

  /// WireMock 2.35.1 answers `500 Server Error` with the Handlebars error and closes the
  /// connection; the server answers 500 with the report, closes, and the test hears it.
  @Test(arguments: [
    "x {{nosuchhelper 'a'}} y", "x {{#if true}} y",
  ])
  func aTemplateThatFailsAnswers500WithTheReport(template: String) async throws {
    let mock = URLSessionMock()
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let mapping: [String: Any] = [
      "request": ["method": "GET", "url": "/bad"],
      "response": ["status": 200, "body": template, "transformers": ["response-template"]],
    ]
    let json = String(decoding: try JSONSerialization.data(withJSONObject: mapping), as: UTF8.self)
    // A template that does not parse is a load note (a warning), heard here.
    let (added, _) = try await withCapturedReports {
      try await AdminClient(server.baseURL).call("POST", "/__admin/mappings", json)
    }
    #expect(added.status == 201)
    let (answer, reports) = try withCapturedReports { try rawGet("/bad", from: server) }
    #expect(answer.hasPrefix("HTTP/1.1 500 "), "\(answer)")
    #expect(answer.lowercased().contains("connection: close"), "\(answer)")
    #expect(answer.contains("template"), "\(answer)")
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("cannot answer GET") == true, "\(reports)")
  }

  /// With every response templated (`--global-response-templating`), WireMock templates a
  /// mapping added later through `POST /__admin/mappings` too; its listing shows the mapping
  /// as it was given.
  @Test func globalTemplatingReachesMappingsAddedThroughTheAdminAPI() async throws {
    let mock = URLSessionMock()
    let server = try mock.startServer(admin: true, templatingAdminMappings: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    let added = try await admin.call(
      "POST", "/__admin/mappings",
      #"{"request": {"method": "GET", "urlPath": "/echo"}, "response": {"body": "{{request.path}} {{request.query.q}}"}}"#
    )
    #expect(added.status == 201)
    let echoed = try await admin.call("GET", "/echo?q=hi")
    #expect(echoed.status == 200)
    #expect(echoed.text == "/echo hi")
    let listed = try await admin.call("GET", "/__admin/mappings")
    #expect(listed.text.contains("{{request.path}}"))
    #expect(!listed.text.contains("response-template"))

    // Without the setting, the same mapping is served as it is written.
    let plain = URLSessionMock()
    let plainServer = try plain.startServer(admin: true)
    defer { plainServer.stop() }
    let plainAdmin = AdminClient(plainServer.baseURL)
    _ = try await plainAdmin.call(
      "POST", "/__admin/mappings",
      #"{"request": {"method": "GET", "urlPath": "/echo"}, "response": {"body": "{{request.path}}"}}"#
    )
    #expect(try await plainAdmin.call("GET", "/echo").text == "{{request.path}}")
  }

  /// A templated `proxyBaseUrl` is rendered for each request, as WireMock 2.35.1 renders it
  /// (measured: `http://127.0.0.1:{{request.headers.X-Port}}` proxies to the port the
  /// request names, path and query appended). Without templating, WireMock answers 500
  /// ("Illegal character in authority"), and so does the server.
  @Test func aTemplatedProxyBaseURLPicksItsUpstreamPerRequest() async throws {
    let upstream = URLSessionMock()
    upstream.stub(.get("/px/file"), with: .text("from upstream"))
    let upstreamServer = try upstream.startServer()
    defer { upstreamServer.stop() }
    let upstreamPort = try #require(upstreamServer.baseURL.port)

    let mock = URLSessionMock()
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    let templated =
      #"{"request": {"method": "GET", "urlPathPattern": "/px/.*"}, "response": {"proxyBaseUrl": "http://127.0.0.1:{{request.headers.X-Port}}", "transformers": ["response-template"]}}"#
    #expect(try await admin.call("POST", "/__admin/mappings", templated).status == 201)
    let plain =
      #"{"request": {"method": "GET", "urlPathPattern": "/pp/.*"}, "response": {"proxyBaseUrl": "http://127.0.0.1:{{request.headers.X-Port}}"}}"#
    #expect(try await admin.call("POST", "/__admin/mappings", plain).status == 201)

    let (answer, reports) = try withCapturedReports {
      try rawGet(
        "/px/file", from: server, headers: "X-Port: \(upstreamPort)\r\nConnection: close\r\n")
    }
    #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(answer)")
    #expect(answer.hasSuffix("from upstream"), "\(answer)")
    #expect(reports.isEmpty, "\(reports)")
    #expect(upstream.requests.map { $0.url?.path } == ["/px/file"])

    let (refused, refusals) = try withCapturedReports {
      try rawGet("/pp/file", from: server, headers: "X-Port: \(upstreamPort)\r\n")
    }
    #expect(refused.hasPrefix("HTTP/1.1 500 "), "\(refused)")
    #expect(refused.contains("response-template"), "\(refused)")
    #expect(refusals.count == 1)
    #expect(upstream.requests.count == 1)
  }
}
