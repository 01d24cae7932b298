import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The load test and the out-of-process clients. Serialized, so that the descriptor count of
/// the process is not disturbed by the other tests of this suite.
@Suite(.serialized) struct ServerLoadTests {
  struct Tally: Sendable {
    private let counts = Shared((answered: 0, wrong: [String]()))
    func record(_ ok: Bool, _ what: @autoclosure () -> String) {
      counts.withLock {
        $0.answered += 1
        if !ok, $0.wrong.count < 5 { $0.wrong.append(what()) }
      }
    }
    var result: (Int, [String]) { counts.current }
  }

  @Test func sixtyFourKeepAliveClientsTimesTwoHundredRequestsAreEachAnsweredOnce() async throws {
    let clients = 64
    let perClient = 200
    let mock = URLSessionMock()
    mock.stub(.post("/echo/{client}")) { request in .data(request.httpBody ?? Data()) }
    let descriptorsBefore = openDescriptorCount()
    // Every request stays in the journal, to be verified below.
    let server = try mock.startServer(
      limits: ServerLimits(maxJournalExchanges: clients * perClient))
    let port = server.port
    let tally = Tally()
    let group = DispatchGroup()
    for client in 0..<clients {
      group.enter()
      let thread = Thread {
        defer { group.leave() }
        guard let connection = try? RawClient(port: port) else {
          tally.record(false, "client \(client) could not connect")
          return
        }
        for request in 0..<perClient {
          let body = "client \(client) request \(request)"
          connection.send(
            "POST /echo/\(client) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
          )
          let response = connection.readResponse()
          tally.record(
            response?.status == 200 && response?.body == body,
            "\(body) got \(response.map { "\($0.status) \($0.body)" } ?? "no answer")")
        }
      }
      thread.start()
    }
    // A safety net against a hung server, not a timing assertion. Waited for on a thread of its
    // own: the load takes seconds (tens under the thread sanitizer), and must not hold one of
    // the cooperative pool's two threads, which every other test runs on, all that time.
    let finished = try await PythonAdminClient.offThePool {
      group.wait(timeout: .now() + 240) == .success
    }
    #expect(finished)
    let (answered, wrong) = tally.result
    #expect(answered == clients * perClient)
    #expect(wrong.isEmpty, "\(wrong)")
    #expect(mock.requests.count == 12_800)
    for client in [0, 31, 63] {
      #expect(mock.verify(.post("/echo/\(client)"), called: .exactly(perClient)))
    }
    server.stop()
    #expect(server.openDescriptorCount == 0)
    if let sockets = openSockets(onPort: port) {
      #expect(sockets.isEmpty, "sockets left open after stop(): \(sockets)")
    }
    if let before = descriptorsBefore, let after = openDescriptorCount() {
      // Other suites run in parallel and open descriptors of their own, so the process-wide
      // count is informational; the two checks above are the server's own.
      print("open descriptors: \(before) before start(), \(after) after stop()")
    }
  }

  @Test(.enabled(if: installed("curl") != nil, "curl is not installed (apt-get install curl)"))
  func curlIsVerifiedLikeAnyClient() async throws {
    let curl = try #require(installed("curl"))
    let mock = URLSessionMock()
    mock.stub(.post("/items").jsonBody(["name": "widget"]), with: .status(201))
    mock.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
    mock.stub(.head("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
    let server = try mock.startServer()
    defer { server.stop() }
    let base = server.baseURL.absoluteString
    let user = try await run(curl, ["-s", "-H", "X-From: curl", "\(base)/users/octocat"])
    #expect(user.contains("octocat"))
    let status = try await run(
      curl,
      [
        "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json",
        "--data", #"{"name":"widget"}"#, "\(base)/items",
      ])
    #expect(status == "201")
    let chunked = try await run(
      curl,
      [
        "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked",
        "-H", "Content-Type: application/json", "--data", #"{"name":"widget"}"#, "\(base)/items",
      ])
    #expect(chunked == "201")
    let head = try await run(curl, ["-s", "-I", "\(base)/users/octocat"])
    #expect(head.hasPrefix("HTTP/1.1 200"))
    #expect(mock.verify(.get("/users/octocat").header("X-From", "curl"), called: .once))
    #expect(mock.verify(.post("/items"), called: .exactly(2)))
  }

  @Test(.enabled(if: installed("python3") != nil, "python3 is not installed"))
  func pythonHTTPClientIsVerifiedLikeAnyClient() async throws {
    let python = try #require(installed("python3"))
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("first"))
    mock.stub(.put("/b"), with: .text("second"))
    let server = try mock.startServer()
    defer { server.stop() }
    // One keep-alive connection, two requests; the second with Expect: 100-continue.
    let script = """
      import http.client, sys
      c = http.client.HTTPConnection("127.0.0.1", \(server.port), timeout=10)
      c.request("GET", "/a", headers={"X-From": "python"})
      r = c.getresponse(); a = r.read().decode()
      c.request("PUT", "/b", body=b"payload", headers={"Expect": "100-continue"})
      r = c.getresponse(); b = r.read().decode()
      print(a, b, r.status)
      """
    let output = try await run(python, ["-c", script])
    #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "first second 200")
    #expect(mock.verify(.get("/a").header("X-From", "python"), called: .once))
    #expect(mock.verify(.put("/b").body(Data("payload".utf8)), called: .once))
  }
}
