import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Mappings from real mobile mapping sets that WireMock 2.35.1 loads and this package once
/// refused or answered differently (issue 30): served by the real WireMock and by this package
/// (injected, and over its loopback server), the same requests to each, the answers compared.
@Suite(
  .enabled(if: RealWireMock.isAvailable, "\(RealWireMock.unavailableReason ?? "")"),
  .timeLimit(.minutes(3)))
struct WireMockLoadingSideBySideTests {
  typealias Probe = WireMockSideBySideTests.Probe

  static let mappings: [String: String] = [
    "body-true.json": #"{"request": {"url": "/body/true"}, "response": {"body": true}}"#,
    "body-42.json": #"{"request": {"url": "/body/42"}, "response": {"body": 42}}"#,
    "body-decimal.json": #"{"request": {"url": "/body/decimal"}, "response": {"body": 1.50}}"#,
    "body-null.json": #"{"request": {"url": "/body/null"}, "response": {"body": null}}"#,
    "basic-auth.json":
      #"{"request": {"url": "/legacy-auth", "basicAuth": {"username": "u", "password": "p"}}, "response": {"body": "authed"}}"#,
    "root-filter.json":
      #"{"request": {"method": "POST", "url": "/root-filter", "bodyPatterns": [{"matchesJsonPath": "$.[?(@.name=='A')]"}]}, "response": {"body": "filtered"}}"#,
    "absent.json":
      #"{"request": {"method": "POST", "url": "/absent", "bodyPatterns": [{"matchesJsonPath": {"expression": "$.items", "absent": true}}]}, "response": {"body": "no items"}}"#,
    "numbers.json":
      #"{"request": {"url": "/numbers"}, "response": {"jsonBody": {"a": 1.0, "b": 1e2, "c": -0.0, "d": 1E-7, "e": [2.50, -0, 1.23e20, 100.0e-2, -1.5e-10]}}}"#,
    "keep-alive.json":
      #"{"request": {"url": "/keep-alive"}, "response": {"headers": {"Keep-Alive": "timeout=5, max=100", "X-Kind": "ka"}, "body": "ka"}}"#,
    "webhook.json":
      #"{"request": {"url": "/webhook"}, "response": {"body": "hooked"}, "postServeActions": [{"name": "webhook", "parameters": {"method": "POST", "url": "http://127.0.0.1:9/hook", "body": "sent"}}]}"#,
    "comments.json": """
    // Written by hand, with comments, as WireMock reads it.
    {"request": {"url": "/comments"}, /* the answer */ "response": {"body": "commented"}}
    """,
    "single-quotes.json": "{'request': {'url': '/single'}, 'response': {'body': 'quoted \\' too'}}",
  ]

  static var probes: [Probe] {
    var probes: [Probe] = []
    func add(
      _ method: String = "GET", _ path: String, _ headers: [String: String] = [:],
      _ body: String? = nil
    ) {
      probes.append(Probe(method: method, path: path, headers: headers, body: body))
    }
    for path in ["/body/true", "/body/42", "/body/decimal", "/body/null"] { add("GET", path) }
    add("GET", "/legacy-auth", ["Authorization": "Basic dTpw"])
    add("GET", "/legacy-auth", ["Authorization": "Basic dTp4"])
    add("GET", "/legacy-auth")
    for body in [
      #"[{"name":"A"}]"#, #"{"x":{"name":"A"}}"#, #"{"name":"A"}"#, #"[{"name":"B"}]"#,
      #"[{"name":"B"},{"name":"A"}]"#,
    ] {
      add("POST", "/root-filter", [:], body)
    }
    for body in ["not json", #"{"items": 1}"#, #"{"x": 1}"#, ""] {
      add("POST", "/absent", [:], body)
    }
    add("GET", "/numbers")
    add("GET", "/keep-alive")
    add("GET", "/webhook")
    add("GET", "/comments")
    add("GET", "/single")
    return probes
  }

  /// What a client saw, with the `Keep-Alive` header besides those the other suite compares.
  static func outcome(_ session: any HTTPSession, base: URL, _ probe: Probe) async
    -> WireMockSideBySideTests.Outcome
  {
    var outcome = await WireMockSideBySideTests.outcome(session, base: base, probe)
    if probe.path == "/keep-alive", let url = URL(string: base.absoluteString + probe.path),
      let (_, response) = try? await session.data(for: URLRequest(url: url)),
      let value = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Keep-Alive")
    {
      outcome.headers["Keep-Alive"] = value
    }
    return outcome
  }

  @Test func mappingsWireMockLoadsAnswerAsTheRealWireMockAnswersThem() async throws {
    let folder = try TemporaryFolder("wiremock-loading")
    for (name, text) in Self.mappings {
      let url = folder.url.appendingPathComponent("mappings/" + name)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    let bundle = try MockBundle(contentsOf: folder.url)
    #expect(bundle.count == Self.mappings.count)
    func makeMock() -> URLSessionMock {
      let mock = URLSessionMock(bundle: bundle, clock: ContinuousClock())
      mock.unmatchedRequestPolicy = .respond(with: .status(404))
      return mock
    }
    // The webhook's mapping says once, on load, that no webhook is sent.
    let (mocks, reports) = withCapturedReports { (makeMock(), makeMock()) }
    #expect(reports.count == 2)
    #expect(reports.allSatisfy { $0.message.contains("webhook.json: postServeActions") })
    let (injected, served) = mocks
    let server = try served.startServer()
    defer { server.stop() }
    let wireMock = try await RealWireMock.start(rootDirectory: folder.url)
    defer { wireMock.stop() }
    let live = URLSession(configuration: .ephemeral)
    defer { live.finishTasksAndInvalidate() }
    let serverBase = URL(string: "http://127.0.0.1:\(server.port)")!

    var answered = 0
    for probe in Self.probes {
      let real = await Self.outcome(live, base: wireMock.baseURL, probe)
      let overLoopback = await Self.outcome(live, base: serverBase, probe)
      let throughInjection = await Self.outcome(
        injected, base: URL(string: "http://127.0.0.1")!, probe)
      #expect(overLoopback == real, "\(probe): loopback \(overLoopback), WireMock \(real)")
      #expect(throughInjection == real, "\(probe): injected \(throughInjection), WireMock \(real)")
      if real.status == 200 { answered += 1 }
    }
    // Not all 404s: the measured answers themselves.
    #expect(answered == 15)
  }
}
