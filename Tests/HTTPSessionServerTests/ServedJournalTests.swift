import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The journal of a mock that a loopback server serves: bounded, so that a long-running server
/// keeps bounded memory, and honest about what it dropped.
@Suite struct ServedJournalTests {
  /// Sends GETs for `paths` on one keep-alive connection and reads each answer.
  private func get(_ paths: [String], port: Int) throws -> [Int?] {
    let client = try RawClient(port: port)
    return paths.map { path in
      client.send("GET \(path) HTTP/1.1\r\nHost: a\r\n\r\n")
      return client.readResponse()?.status
    }
  }

  @Test func aServedMockKeepsOnlyTheNewestExchangesAndCountsEveryRequest() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/r/{n}"), with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(maxJournalExchanges: 3))
    defer { server.stop() }
    let paths = (1...5).map { "/r/\($0)" }
    #expect(try get(paths, port: server.port) == Array(repeating: 200, count: 5))
    #expect(mock.requests.map { $0.url?.path } == ["/r/3", "/r/4", "/r/5"])
    #expect(mock.exchanges.map { $0.request.url?.path } == ["/r/3", "/r/4", "/r/5"])
    #expect(mock.exchanges.allSatisfy { $0.body == Data("fine".utf8) })
    #expect(mock.events.count <= 12)
    #expect(mock.events.last?.description.contains("completed 200") == true)
    // The count goes on: five requests were sent, though three are kept.
    try await mock.waitForRequests(count: 5, timeout: .seconds(5))
    #expect(ServerLimits().maxJournalExchanges == 10_000)
  }

  @Test func aJournalOfZeroKeepsNothing() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(maxJournalExchanges: 0))
    defer { server.stop() }
    #expect(try get(["/a", "/b"], port: server.port) == [200, 200])
    #expect(mock.requests.isEmpty)
    #expect(mock.exchanges.isEmpty)
    #expect(mock.events.isEmpty)
  }

  @Test func aMockThatNoServerServesKeepsEverything() async throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let body = Data(repeating: 7, count: 2 * 1024 * 1024)
    var request = URLRequest(url: try #require(URL(string: "https://example.com/up")))
    request.httpMethod = "POST"
    request.httpBody = body
    for _ in 0..<3 { _ = try await mock.data(for: request) }
    #expect(mock.requests.count == 3)
    #expect(mock.requests.allSatisfy { $0.httpBody == body })
    #expect(mock.exchanges.first?.requestBodyByteCount == body.count)
  }

  @Test func bodiesOverTheJournalLimitKeepTheirPrefixAndSize() throws {
    let mock = URLSessionMock()
    // The stub sees the whole body, and answers with it.
    mock.stub(.post("/echo")) { request in .data(request.httpBody ?? Data()) }
    let server = try mock.startServer(limits: ServerLimits(maxJournalBodyBytes: 8))
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    let body = "0123456789abcdefghij"
    client.send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 20\r\n\r\n\(body)")
    let answer = try #require(client.readResponse())
    #expect(answer.status == 200)
    #expect(answer.body == body)
    let exchange = try #require(mock.exchanges.first)
    #expect(mock.requests.first?.httpBody == Data("01234567".utf8))
    #expect(exchange.request.httpBody == Data("01234567".utf8))
    #expect(exchange.requestBodyByteCount == 20)
    #expect(exchange.body == Data("01234567".utf8))
    #expect(exchange.bodyByteCount == 20)
    #expect(mock.events.allSatisfy { ($0.request.httpBody?.count ?? 0) <= 8 })
    #expect(ServerLimits().maxJournalBodyBytes == 1024 * 1024)
  }

  @Test func verifyPassesOnlyWhenTheDroppedRequestsCannotChangeItsVerdict() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(maxJournalExchanges: 2))
    defer { server.stop() }
    // "/a" is dropped; the journal keeps the two "/b".
    #expect(try get(["/a", "/b", "/b"], port: server.port) == [200, 200, 200])
    #expect(mock.verify(.get("/b"), called: .atLeast(2)))
    let (verdicts, reports) = withCapturedReports {
      [
        mock.verify(.get("/b"), called: .exactly(2)),
        mock.verify(.get("/a"), called: .never),
        mock.verify(.get("/c"), called: .atLeast(3)),
      ]
    }
    #expect(verdicts == [false, false, false])
    try #require(reports.count == 3)
    #expect(reports[0].message.contains("Cannot tell whether GET /b was called exactly 2 times"))
    #expect(reports[0].message.contains("between 2 and 3 times"))
    #expect(reports[1].message.contains("Cannot tell whether GET /a was called never"))
    #expect(reports[2].message.contains("Expected GET /c to be called at least 3 times"))
    #expect(reports[2].message.contains("has dropped 1 older ones"))
  }

  @Test func verifyNoUnmatchedRequestsCountsTheDroppedOnes() throws {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    mock.stub(.get("/known"), with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(maxJournalExchanges: 1))
    defer { server.stop() }
    #expect(try get(["/nope", "/nope2", "/known"], port: server.port) == [404, 404, 200])
    #expect(mock.unmatchedRequests.map { $0.url?.path } == ["/nope2"])
    let (passed, reports) = withCapturedReports { mock.verifyNoUnmatchedRequests() }
    #expect(!passed)
    #expect(reports.first?.message.contains("2 request(s) matched no stub") == true)
  }
}
