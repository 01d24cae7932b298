import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// WireMock's `proxyBaseUrl`, side by side: the real WireMock 2.35.1 and this package (over its
/// loopback server and injected) read the same mappings and proxy to the same upstream, a third
/// server on 127.0.0.1 (another mock's loopback server); the answers, and what the upstream
/// received, are compared.
@Suite(
  .enabled(if: RealWireMock.isAvailable, "\(RealWireMock.unavailableReason ?? "")"),
  .timeLimit(.minutes(3)))
struct WireMockProxyTests {
  /// The upstream: answers that show what it received.
  static func makeUpstream() -> URLSessionMock {
    let upstream = URLSessionMock()
    upstream.unmatchedRequestPolicy = .respond(with: .text("upstream has no stub", status: 404))
    upstream.stub(.get("/up/users")) { request in
      .text(
        "users " + (request.url?.query ?? ""), status: 200,
        headers: ["Content-Type": "text/x-users", "X-Upstream": "users"])
    }
    upstream.stub(.url("/up/items")) { request in
      let body = request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? ""
      return .text(
        "\(request.httpMethod ?? "?") \(body)", status: 201, headers: ["X-Upstream": "items"])
    }
    upstream.stub(.get("/up/echo")) { request in
      let names = ["X-Added", "X-Secret", "X-Keep", "Host"]
      let text = names.map { "\($0)=\(request.value(forHTTPHeaderField: $0) ?? "-")" }
      return .text(text.joined(separator: " "))
    }
    upstream.stub(.get("/up/moved"), with: .status(302, headers: ["Location": "/up/users"]))
    upstream.stub(.get("/up/busy"), with: .text("busy", status: 503, headers: ["Retry-After": "3"]))
    upstream.stub(.get("/base/v2"), with: .text("under a base path"))
    return upstream
  }

  static func mappings(upstreamPort: Int) -> [String: String] {
    let base = "http://127.0.0.1:\(upstreamPort)"
    return [
      "proxy-all.json":
        #"{"request": {"urlPathPattern": "/up/.*"}, "response": {"proxyBaseUrl": ""#
        + base
        + #"", "additionalProxyRequestHeaders": {"X-Added": "yes"}}}"#,
      "proxy-base.json":
        #"{"request": {"method": "GET", "urlPath": "/v2"}, "response": {"proxyBaseUrl": ""#
        + base + #"/base"}}"#,
      "local.json":
        #"{"request": {"method": "GET", "urlPath": "/local"}, "response": {"status": 200, "body": "local"}}"#,
    ]
  }

  struct Probe: CustomStringConvertible {
    var method: String
    var path: String
    var headers: [String: String] = [:]
    var body: String?
    var description: String { "\(method) \(path)" }
  }

  static let probes: [Probe] = [
    Probe(method: "GET", path: "/up/users?b=2&a=1"),
    Probe(method: "POST", path: "/up/items", body: "widget"),
    Probe(method: "PUT", path: "/up/items", body: "gadget"),
    Probe(method: "DELETE", path: "/up/items"),
    Probe(method: "GET", path: "/up/echo", headers: ["X-Secret": "s", "X-Keep": "k"]),
    Probe(method: "GET", path: "/up/moved"),
    Probe(method: "GET", path: "/up/busy"),
    Probe(method: "GET", path: "/up/nothing"),
    Probe(method: "GET", path: "/v2"),
    Probe(method: "GET", path: "/local"),
  ]

  struct Outcome: Equatable, CustomStringConvertible {
    var status: Int?
    var headers: [String: String] = [:]
    var body = ""
    var error: URLError.Code?
    var description: String {
      if let error { return "error \(error.rawValue)" }
      return "\(status ?? 0) \(headers.sorted { $0.key < $1.key }) \(body)"
    }
  }

  static let comparedHeaders = ["Content-Type", "X-Upstream", "Location", "Retry-After"]

  static func outcome(_ session: any HTTPSession, base: URL, _ probe: Probe) async -> Outcome {
    guard let url = URL(string: base.absoluteString + probe.path) else { return Outcome() }
    var request = URLRequest(url: url)
    request.httpMethod = probe.method
    request.timeoutInterval = 10
    for (name, value) in probe.headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = probe.body.map { Data($0.utf8) }
    do {
      let (data, response) = try await session.data(for: request)
      guard let http = response as? HTTPURLResponse else { return Outcome() }
      var outcome = Outcome(status: http.statusCode, body: String(decoding: data, as: UTF8.self))
      for name in comparedHeaders {
        if let value = http.value(forHTTPHeaderField: name) { outcome.headers[name] = value }
      }
      return outcome
    } catch {
      return Outcome(error: (error as? URLError)?.code ?? .unknown)
    }
  }

  /// What the upstream received, without the fields each client sets its own way.
  static func received(_ upstream: URLSessionMock) -> [String] {
    upstream.requests.map { request in
      let body = request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? ""
      return "\(request.httpMethod ?? "GET") \(request.url?.path ?? "")"
        + "?\(request.url?.query ?? "") \(body)"
    }
  }

  @Test func theRealWireMockAndThisPackageProxyAlike() async throws {
    let upstream = Self.makeUpstream()
    let upstreamServer = try upstream.startServer()
    defer { upstreamServer.stop() }
    let folder = try TemporaryFolder("wiremock-proxy")
    for (name, text) in Self.mappings(upstreamPort: upstreamServer.port) {
      let url = folder.url.appendingPathComponent("mappings/" + name)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    let bundle = try MockBundle(contentsOf: folder.url)
    let served = URLSessionMock(bundle: bundle)
    let server = try served.startServer()
    defer { server.stop() }
    let injected = URLSessionMock(bundle: bundle)
    let wireMock = try await RealWireMock.start(rootDirectory: folder.url)
    defer { wireMock.stop() }
    // A client that follows no redirect, so that a proxied 302 is seen as it is.
    let client = URLSession(
      configuration: .ephemeral, delegate: RedirectRefusal(), delegateQueue: nil)
    defer { client.finishTasksAndInvalidate() }
    let serverBase = URL(string: "http://127.0.0.1:\(server.port)")!

    var real: [Outcome] = []
    for probe in Self.probes {
      real.append(await Self.outcome(client, base: wireMock.baseURL, probe))
    }
    let receivedByWireMock = Self.received(upstream)
    let echoedByWireMock = real[4].body
    upstream.resetJournal()
    for (probe, expected) in zip(Self.probes, real) {
      let overLoopback = await Self.outcome(client, base: serverBase, probe)
      #expect(overLoopback == expected, "\(probe): loopback \(overLoopback), WireMock \(expected)")
    }
    let receivedByLoopback = Self.received(upstream)
    upstream.resetJournal()
    for (probe, expected) in zip(Self.probes, real) {
      let throughInjection = await Self.outcome(
        injected, base: URL(string: "http://app.test")!, probe)
      #expect(
        throughInjection == expected, "\(probe): injected \(throughInjection), WireMock \(expected)"
      )
    }
    let receivedByInjection = Self.received(upstream)

    // Each side sent the upstream the same requests (all but /local).
    #expect(receivedByWireMock.count == Self.probes.count - 1)
    #expect(receivedByLoopback == receivedByWireMock)
    #expect(receivedByInjection == receivedByWireMock)
    // The header added, the others kept, and the Host of the upstream. (WireMock 2.35.1 does not
    // know removeProxyRequestHeaders, WireMock 3's member: the unit tests cover it.)
    #expect(
      echoedByWireMock == "X-Added=yes X-Secret=s X-Keep=k Host=127.0.0.1:\(upstreamServer.port)")
    #expect(real[5].status == 302)
    #expect(real[7].status == 404)
    // Each side's own journal holds what it received, answered by the proxy mapping.
    #expect(served.exchanges.count == Self.probes.count)
    #expect(served.exchanges.first?.request.url?.path == "/up/users")
    #expect(served.exchanges.first?.answeredBy?.contains("proxy-all.json") == true)
    #expect(served.unmatchedRequests.isEmpty)
  }
}

/// Refuses every redirect: the client sees the `3xx` itself.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
    completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    completionHandler(nil)
  }
}
