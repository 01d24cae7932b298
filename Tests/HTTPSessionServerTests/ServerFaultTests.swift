import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// WireMock's faults (`StubResponse.fault`) on the loopback server: the bytes WireMock 2.35.1
/// writes for each, and a real TCP reset for a reset.
@Suite struct ServerFaultTests {
  @Test func aConnectionResetIsARealTCPReset() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/reset"), with: .fault(.connectionResetByPeer))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /reset HTTP/1.1\r\nHost: a\r\n\r\n")
    var buffer = [UInt8](repeating: 0, count: 64)
    let received = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
    let error = errno
    #expect(received == -1)
    #expect(error == ECONNRESET)
  }

  @Test func aConnectionResetReachesURLSessionAsALostConnection() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/reset"), with: .fault(.connectionResetByPeer))
    let server = try mock.startServer()
    defer { server.stop() }
    await #expect {
      _ = try await liveSession().data(from: server.baseURL.appendingPathComponent("reset"))
    } throws: {
      ($0 as? URLError)?.code == .networkConnectionLost
    }
  }

  @Test func anEmptyResponseClosesWithoutAByte() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/empty"), with: .fault(.emptyResponse))
    let server = try mock.startServer()
    defer { server.stop() }
    #expect(try rawExchange(port: server.port, "GET /empty HTTP/1.1\r\nHost: a\r\n\r\n") == "")
  }

  @Test func aMalformedChunkAndRandomDataAreWireMocksBytes() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chunk"), with: .fault(.malformedResponseChunk))
    mock.stub(.get("/random"), with: .fault(.randomDataThenClose))
    let server = try mock.startServer()
    defer { server.stop() }
    let garbage = "lskdu018973t09sylgasjkfg1][]'./.sdlv"
    #expect(
      try rawExchange(port: server.port, "GET /chunk HTTP/1.1\r\nHost: a\r\n\r\n")
        == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + garbage)
    #expect(
      try rawExchange(port: server.port, "GET /random HTTP/1.1\r\nHost: a\r\n\r\n") == garbage)
  }

  @Test func aStubsReasonPhraseIsWrittenInTheStatusLine() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/status"), with: .status(503).reasonPhrase("Down for maintenance"))
    mock.stub(
      .get("/cookies"),
      with: .status(200).header("Set-Cookie", values: ["a=1", "b=2"]).reasonPhrase("Fine"))
    mock.stub(.get("/plain"), with: .status(503))
    let server = try mock.startServer()
    defer { server.stop() }
    func exchange(_ path: String) throws -> String {
      try rawExchange(
        port: server.port, "GET \(path) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    }
    #expect(try exchange("/status").hasPrefix("HTTP/1.1 503 Down for maintenance\r\n"))
    let cookies = try exchange("/cookies")
    #expect(cookies.hasPrefix("HTTP/1.1 200 Fine\r\n"))
    #expect(cookies.contains("\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n"))
    #expect(try exchange("/plain").hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
  }

  @Test func aHeaderWithSeveralValuesIsOneLineAValue() throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/login"),
      with: .status(204, headers: ["X-A": "1"]).header("Set-Cookie", values: ["a=1", "b=2"]))
    let server = try mock.startServer()
    defer { server.stop() }
    let raw = try rawExchange(
      port: server.port, "GET /login HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    #expect(raw.contains("\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n"))
    #expect(raw.contains("\r\nX-A: 1\r\n"))
  }
}
