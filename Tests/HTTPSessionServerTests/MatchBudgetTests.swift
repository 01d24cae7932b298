import Foundation
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Patterns that take long to match, served over 127.0.0.1: a slow regular expression or
/// JSONPath holds up its own request only, and one that runs past the server's match budget
/// fails that request with a report that names it.
@Suite(.serialized) struct MatchBudgetTests {
  /// `/(a*)*b` backtracks for seconds on a run of `a`s that has no `b` (issue 27 §4).
  static let catastrophic = "(a*)*b"
  static let manyAs = String(repeating: "a", count: 90)

  /// `GET path` over a fresh connection with extra header lines: (status, body); `nil` when
  /// the connection closed (or stayed silent for the client's 5 s safety timeout) first.
  static func get(_ port: Int, _ path: String, _ headers: [String] = []) throws -> (Int, String)? {
    let client = try RawClient(port: port)
    let fields = (["Host: 127.0.0.1:\(port)", "Connection: close"] + headers)
      .joined(separator: "\r\n")
    client.send("GET \(path) HTTP/1.1\r\n\(fields)\r\n\r\n")
    return client.readResponse().map { ($0.status, $0.body) }
  }

  /// `POST path` with a JSON body: (status, body).
  static func post(_ port: Int, _ path: String, json: String) throws -> (Int, String)? {
    let client = try RawClient(port: port)
    client.send(
      "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        + "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)")
    return client.readResponse().map { ($0.status, $0.body) }
  }

  @Test func anotherClientIsAnsweredWhileASlowPatternIsBeingMatched() throws {
    // The probe holds the slow match on its first step until the other client has its answer:
    // if matching held the mock's lock, that answer could never come.
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let probed = Shared(false)
    let ((fast, slow), reports) = try withCapturedReports {
      let mock = URLSessionMock()
      mock.stub(.get("/slow").header("X-Key", .matches(Self.catastrophic)), with: .text("slow"))
      mock.stub(.get("/fast"), with: .text("fast"))
      mock.probeMatching {
        let first = probed.withLock { seen -> Bool in
          defer { seen = true }
          return !seen
        }
        guard first else { return }
        started.signal()
        release.wait()
      }
      let server = try mock.startServer(limits: ServerLimits(maxMatchDuration: .milliseconds(1)))
      defer { server.stop() }
      let port = server.port
      // The slow client runs on a thread of its own, not on the cooperative pool: this test
      // blocks a pool thread while it waits, and with 2 cores and other suites blocking theirs,
      // a task on the pool could wait for a thread for longer than the safety net below.
      let slowAnswer = Shared<Result<(Int, String)?, any Error>?>(nil)
      let slowDone = DispatchSemaphore(value: 0)
      Thread {
        let answer = Result { try Self.get(port, "/slow", ["X-Key: \(Self.manyAs)"]) }
        slowAnswer.withLock { $0 = answer }
        slowDone.signal()
      }.start()
      // A safety net only: the slow match starts at once.
      let began = started.wait(timeout: .now() + 30) == .success
      #expect(began, "the slow pattern was never matched under a budget")
      let fast = try Self.get(port, "/fast")
      release.signal()
      #expect(slowDone.wait(timeout: .now() + 30) == .success, "the slow client never ended")
      return (fast, try slowAnswer.current?.get() ?? nil)
    }
    #expect(fast?.0 == 200 && fast?.1 == "fast", "\(String(describing: fast))")
    #expect(slow?.0 == 500, "\(String(describing: slow))")
    #expect(slow?.1.contains("regular expression /\(Self.catastrophic)/") == true)
    #expect(reports.count == 1, "\(reports.map(\.message))")
    #expect(
      reports.first?.message.contains("regular expression /\(Self.catastrophic)/") == true,
      "\(reports.map(\.message))")
  }

  @Test func aRegularExpressionPastTheBudgetFailsItsRequestNamingThePattern() async throws {
    let served = Shared<[String]>([])
    let (answers, reports) = try withCapturedReports {
      let mock = URLSessionMock()
      // Four mappings that all try the path, as in the report of issue 27.
      for _ in 0..<4 {
        mock.stub(.regex("/" + Self.catastrophic + "$"), with: .text("never"))
      }
      mock.stub(.get("/fast"), with: .text("fast"))
      let server = try mock.startServer(
        limits: ServerLimits(maxMatchDuration: .milliseconds(50)), admin: nil
      ) { served.append($0.description) }
      defer { server.stop() }
      return (try Self.get(server.port, "/" + Self.manyAs), try Self.get(server.port, "/fast"))
    }
    let (slow, fast) = answers
    #expect(slow?.0 == 500, "\(String(describing: slow))")
    #expect(slow?.1.contains("/(a*)*b$/") == true, "\(String(describing: slow))")
    #expect(slow?.1.contains("was still running after 50 ms") == true)
    #expect(fast?.0 == 200)
    #expect(reports.count == 1, "\(reports.map(\.message))")
    #expect(reports.first?.message.contains("Matching GET") == true)
    // The server's log line (stub-server's) says so, without running the patterns again.
    #expect(
      served.current.first?.contains("500 over the match budget; Matching GET") == true,
      "\(served.current)")
  }

  @Test func aJSONPathThatSelectsTooManyValuesFailsItsRequestNamingThePath() async throws {
    // 24 levels of nesting: `$..*..*..*` selects far more values than the 169 bytes hold.
    var body = "1"
    for level in 0..<24 { body = level.isMultiple(of: 2) ? "[\(body),2]" : "{\"k\":\(body)}" }
    let path = "$..*..*..*"
    let (answers, reports) = try withCapturedReports {
      let mock = URLSessionMock()
      mock.stub(.post("/json").body(.matchesJSONPath(path)), with: .text("matched"))
      mock.stub(.post("/small").body(.matchesJSONPath(path)), with: .text("matched"))
      let server = try mock.startServer(limits: ServerLimits(maxJSONPathValues: 500))
      defer { server.stop() }
      return (
        try Self.post(server.port, "/json", json: body),
        try Self.post(server.port, "/small", json: #"{"a":[{"k":1}]}"#)
      )
    }
    let (answer, small) = answers
    #expect(answer?.0 == 500, "\(String(describing: answer))")
    #expect(answer?.1.contains("JSONPath \(path)") == true, "\(String(describing: answer))")
    #expect(answer?.1.contains("selected more than 500 values") == true)
    #expect(reports.count == 1, "\(reports.map(\.message))")
    // The same path over a small document selects what it did.
    #expect(small?.0 == 200 && small?.1 == "matched", "\(String(describing: small))")
  }
}
