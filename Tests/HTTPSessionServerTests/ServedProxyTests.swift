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
    let mock = URLSessionMock()
    mock.stub(
      .get("/p"),
      with: .proxy(
        to: upstreamServer.baseURL, addingHeaders: ["X-A": "a\r\nX-Injected: 1\r\n\r\nGET /x"]))
    let server = try mock.startServer()
    defer { server.stop() }
    try withKnownIssue {
      let answer = try rawExchange(
        port: server.port, "GET /p HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
      #expect(!answer.contains("upstream"))
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("the header X-A holds a carriage return") }
    }
    #expect(upstream.requests.isEmpty, "\(upstream.requests.map(\.allHTTPHeaderFields))")
  }
}
