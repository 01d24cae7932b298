import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The server's per-request observer (what the `stub-server` command logs) and its origin
/// rewriting, in process.
@Suite struct ServedRequestTests {
  @Test func theObserverHearsOfEachRequestBeforeItsAnswerIsWritten() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
    let observed = Shared<[ServedRequest]>([])
    let server = try mock.startServer(observer: observed.append)
    defer { server.stop() }
    let url = try #require(URL(string: server.baseURL.absoluteString + "/users/octocat?a=%20b"))
    let (_, response) = try await liveSession().data(from: url)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    // The answer was given inside `send`: the observer ran before the bytes went out.
    let served = try #require(observed.current.first)
    #expect(observed.current.count == 1)
    #expect(served.method == "GET")
    #expect(served.target == "/users/octocat?a=%20b")
    guard case .answered(200, let stub?) = served.outcome else {
      Issue.record("outcome \(served.outcome)")
      return
    }
    #expect(stub.hasPrefix("GET /users/{login} (registered at "), "\(stub)")
    #expect(served.description == "GET /users/octocat?a=%20b 200 \(stub)")
  }

  @Test func aFaultIsObservedWithItsErrorAndStub() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/gone"), with: .error(URLError(.networkConnectionLost)))
    let observed = Shared<[ServedRequest]>([])
    let server = try mock.startServer(observer: observed.append)
    defer { server.stop() }
    #expect(try rawExchange(port: server.port, "GET /gone HTTP/1.1\r\nHost: a\r\n\r\n") == "")
    let served = try #require(observed.current.first)
    guard case .failed(let error, let stub?) = served.outcome else {
      Issue.record("outcome \(served.outcome)")
      return
    }
    #expect(error == "URLError(.networkConnectionLost)")
    #expect(stub.hasPrefix("GET /gone"))
    #expect(served.description.hasPrefix("GET /gone failed URLError(.networkConnectionLost) "))
  }

  @Test func aDelayedAnswerIsObservedWhenTheClockReachesIt() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/slow"), with: .text("late", status: 202).delayed(by: .seconds(30)))
    let observed = Shared<[ServedRequest]>([])
    let server = try mock.startServer(observer: observed.append)
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    try await mock.waitForRequests(count: 1)
    #expect(observed.current.isEmpty)
    await clock.advance(by: .seconds(30))
    #expect(client.readToEnd().hasSuffix("\r\n\r\nlate"))
    #expect(observed.current.map(\.description).first?.hasPrefix("GET /slow 202 GET /slow") == true)
  }

  @Test func aDribbledAnswerIsObservedAtItsEnd() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/drip"), with: .text("abcd").dribbled(inChunks: 2, over: .seconds(2)))
    let observed = Shared<[ServedRequest]>([])
    let server = try mock.startServer(observer: observed.append)
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /drip HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(1))
    #expect(observed.current.isEmpty)
    await clock.advance(by: .seconds(1))
    #expect(client.readToEnd().contains("Transfer-Encoding: chunked"))
    let line = try #require(observed.current.first).description
    #expect(line.hasPrefix("GET /drip 200 GET /drip"), "\(line)")
  }

  @Test func anOriginRewritesEachRequestBeforeTheMockSeesIt() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("https://api.github.com/users/octocat"), with: .status(204))
    let origin = try #require(URL(string: "https://api.github.com"))
    let server = try mock.startServer(origin: origin)
    defer { server.stop() }
    let (_, response) = try await liveSession().data(
      from: server.baseURL.appendingPathComponent("users/octocat"))
    #expect((response as? HTTPURLResponse)?.statusCode == 204)
    let recorded = try #require(mock.requests.first)
    #expect(recorded.url?.absoluteString == "https://api.github.com/users/octocat")
    #expect(recorded.value(forHTTPHeaderField: "Host") == "127.0.0.1:\(server.port)")
  }

  @Test func anOriginWithAPathQueryOrOtherSchemeIsRefusedByName() throws {
    let mock = URLSessionMock()
    for text in [
      "https://api.github.com/v3", "https://api.github.com?x=1", "ftp://api.github.com",
      "https://user@api.github.com", "file:///index.html",
    ] {
      let origin = try #require(URL(string: text))
      let error = #expect(throws: ServerError.self) { try mock.startServer(origin: origin).stop() }
      #expect(error?.code == .invalidOrigin)
      #expect(error?.description.hasPrefix("\(text) is not an origin to answer as") == true)
    }
    let port = try #require(URL(string: "http://localhost:8080/"))
    try mock.startServer(origin: port).stop()
  }
}
