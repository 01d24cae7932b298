import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Proxied stubs served over 127.0.0.1: what the upstream receives, and what the client gets
/// when the upstream cannot answer.
@Suite struct ServedProxyTests {
  /// An upstream on its own loopback server that answers `200 upstream` to anything.
  func upstream() throws -> (URLSessionMock, LoopbackServer) {
    let upstream = URLSessionMock()
    upstream.unmatchedRequestPolicy = .respond(with: .text("upstream"))
    return (upstream, try upstream.startServer())
  }

  @Test func aProxyMadeInCodeWithALineBreakInAHeaderSendsNothing() throws {
    let (upstream, upstreamServer) = try upstream()
    defer { upstreamServer.stop() }
    // The mock and its server are made inside the capture scope, so that the server's report
    // of the bad stub is captured here rather than recorded as an issue (the suite keeps its
    // 7 known issues).
    let (answer, reports) = try withCapturedReports {
      let mock = URLSessionMock()
      mock.stub(
        .get("/p"),
        with: .proxy(
          to: upstreamServer.baseURL, addingHeaders: ["X-A": "a\r\nX-Injected: 1\r\n\r\nGET /x"]
        ))
      let server = try mock.startServer()
      defer { server.stop() }
      return try rawExchange(
        port: server.port, "GET /p HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
    }
    #expect(!answer.contains("upstream"))
    #expect(
      reports.contains { $0.message.contains("the header X-A holds a carriage return") },
      "\(reports)")
    #expect(upstream.requests.isEmpty, "\(upstream.requests.map(\.allHTTPHeaderFields))")
  }

  /// `GET path` over a fresh connection: (status, body); `nil` when the connection closed (or
  /// stayed silent for the client's 5 s safety timeout) without an answer.
  func get(_ port: Int, _ path: String, _ headers: [String] = []) throws -> (Int, String)? {
    let client = try RawClient(port: port)
    let fields = (["Host: 127.0.0.1:\(port)", "Connection: close"] + headers).joined(
      separator: "\r\n")
    client.send("GET \(path) HTTP/1.1\r\n\(fields)\r\n\r\n")
    return client.readResponse().map { ($0.status, $0.body) }
  }

  @Test func forwardedRequestsCarryTheServersViaAfterTheClients() throws {
    let (upstream, upstreamServer) = try upstream()
    defer { upstreamServer.stop() }
    let mock = URLSessionMock()
    mock.stub(.get("/p"), with: .proxy(to: upstreamServer.baseURL))
    let server = try mock.startServer()
    defer { server.stop() }
    let answer = try #require(try get(server.port, "/p", ["Via: 1.0 client-proxy"]))
    #expect(answer.0 == 200)
    let via = try #require(upstream.requests.first?.value(forHTTPHeaderField: "Via"))
    #expect(via.hasPrefix("1.0 client-proxy, 1.1 httpsessionkit-"), "\(via)")
    // The mock's journal keeps the request as the client sent it.
    #expect(mock.requests.first?.value(forHTTPHeaderField: "Via") == "1.0 client-proxy")
  }

  @Test func aMappingThatProxiesToItsOwnServerAnswers508() async throws {
    let mock = URLSessionMock()
    let server = try mock.startServer(admin: true)
    defer { server.stop() }
    let admin = AdminClient(server.baseURL)
    let loop =
      #"{"request": {"url": "/loop"}, "response": {"proxyBaseUrl": "\#(server.baseURL.absoluteString)"}}"#
    #expect(try await admin.call("POST", "/__admin/mappings", loop).status == 201)
    let answer = try #require(try get(server.port, "/loop"), "no answer: the loop went on")
    #expect(answer.0 == 508)
    #expect(answer.1.contains("came back to this server"), "\(answer.1)")
    // One hop: the client's request, and the same request back, refused.
    #expect(mock.requests.count == 2)
    let statuses = mock.exchanges.map { ($0.response as? HTTPURLResponse)?.statusCode }
    #expect(statuses == [508, 508], "\(mock.exchanges)")
  }

  @Test func twoServersThatProxyToEachOtherAnswer508() throws {
    let first = URLSessionMock()
    let firstServer = try first.startServer()
    defer { firstServer.stop() }
    let second = URLSessionMock()
    let secondServer = try second.startServer()
    defer { secondServer.stop() }
    first.stub(.get("/loop"), with: .proxy(to: secondServer.baseURL))
    second.stub(.get("/loop"), with: .proxy(to: firstServer.baseURL))
    let answer = try #require(try get(firstServer.port, "/loop"), "no answer: the loop went on")
    #expect(answer.0 == 508)
    #expect(first.requests.count == 2)
    #expect(second.requests.count == 1)
  }

  @Test func anUnreachableUpstreamAnswers502NamingIt() throws {
    // A port that was just free: nothing listens there now.
    let closed = try URLSessionMock().startServer()
    let deadPort = closed.port
    closed.stop()
    let mock = URLSessionMock()
    mock.stub(
      .get("/dead"), with: .proxy(to: try #require(URL(string: "http://127.0.0.1:\(deadPort)"))))
    let server = try mock.startServer()
    defer { server.stop() }
    let answer = try #require(try get(server.port, "/dead"), "the connection closed unanswered")
    #expect(answer.0 == 502)
    #expect(answer.1.contains("http://127.0.0.1:\(deadPort)/dead"), "\(answer.1)")
    // The journal keeps what the upstream did: the transport error.
    #expect((mock.exchanges.first?.error as? URLError)?.code == .cannotConnectToHost)
  }

  @Test func anUpstreamThatFailsWithATimeoutAnswers504NamingIt() throws {
    let upstream = URLSessionMock()
    upstream.stub(.get("/slow"), with: .error(URLError(.timedOut)))
    let mock = URLSessionMock()
    mock.stub(
      .get("/slow"),
      with: .proxy(
        to: try #require(URL(string: "https://slow.test")), through: upstream))
    let server = try mock.startServer()
    defer { server.stop() }
    let answer = try #require(try get(server.port, "/slow"), "no answer: the timeout was silent")
    #expect(answer.0 == 504)
    #expect(answer.1.contains("https://slow.test/slow"), "\(answer.1)")
  }
}
