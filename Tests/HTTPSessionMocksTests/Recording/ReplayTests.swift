import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `URLSessionMock(replaying:mode:from:redacting:)`: the modes, the environment variable, CI,
/// atomic writes and symmetric redaction.
@Suite struct ReplayTests {
  /// A live session that answers `/users/{login}` with a body naming the user and a token.
  static func liveSession() -> URLSessionMock {
    let live = URLSessionMock()
    live.stub(.get("/users/{login}")) { _, parameters in
      .json([
        "login": parameters["login"] ?? "", "token": "live-token-\(parameters["login"] ?? "")",
      ])
    }
    return live
  }

  static func user(_ login: String, token: String = "real-token-1") -> URLRequest {
    HARFixtures.request(
      "https://api.example.com/users/\(login)?access_token=\(token)",
      headers: ["Authorization": "Bearer \(token)"])
  }

  @Test func replayAnswersFromTheFileAndNeverTouchesTheLiveSession() async throws {
    let file = try HARFixtures.file(
      HARFixtures.har(HARFixtures.entry("GET", "https://api.example.com/a", text: "recorded")))
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: .replay, from: live, redacting: .default, environment: [:])
    #expect(HARFixtures.send(mock, "https://api.example.com/a").text == "recorded")
    expectReport(containing: "No stub matches GET https://api.example.com/users/octocat") {
      _ = HARFixtures.send(mock, "https://api.example.com/users/octocat")
    }
    #expect(live.requests.isEmpty)
    #expect(mock.unmatchedRequests.count == 1)
  }

  @Test func anEmptyRecordingSaysSoInsteadOfTellingToAddStubs() throws {
    let (mock, _) = try HARFixtures.replaying(HARFixtures.har())
    let reports = expectReport(containing: "No stub matches GET https://api.example.com/a") {
      _ = HARFixtures.send(mock, "https://api.example.com/a")
    }
    let message = try #require(reports.first?.message)
    #expect(message.contains("The recording session.har has no entries"), "\(message)")
    #expect(message.contains("HTTPSESSIONKIT_RECORD=missing"), "\(message)")
    #expect(!message.contains("The mock has no stubs"), "\(message)")
  }

  @Test func replayOfAMissingFileThrows() throws {
    let file = try HARFixtures.folder().appendingPathComponent("absent.har")
    #expect {
      _ = try URLSessionMock(
        replaying: file, mode: .replay, from: URLSessionMock(), environment: [:])
    } throws: { error in
      "\(error)".contains("no recording to replay") && "\(error)".contains("HTTPSESSIONKIT_RECORD")
    }
  }

  @Test func recordMissingRecordsOnceRedactedAndReplaysFromThenOn() throws {
    let file = try HARFixtures.folder().appendingPathComponent("nested/users.har")
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: live, redacting: .default, environment: [:])
    let first = HARFixtures.send(mock, Self.user("octocat"))
    #expect(first.status == 200)
    #expect(first.text.contains("live-token-octocat"))  // the code under test sees the real answer
    let second = HARFixtures.send(mock, Self.user("octocat", token: "another-token"))
    #expect(second.text.contains("REDACTED"))  // replayed from the recording
    #expect(live.requests.count == 1)
    // The live session got the real request; the journal keeps it as sent.
    #expect(
      live.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer real-token-1")
    #expect(
      mock.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == [
        "Bearer real-token-1", "Bearer another-token",
      ])
    let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    for secret in ["real-token-1", "live-token-octocat", "another-token"] {
      #expect(!text.contains(secret), "the file holds \(secret)")
    }
    #expect(try HARFixtures.entries(of: Data(contentsOf: file)).count == 1)
  }

  @Test func recordMissingAppendsToTheFileAndKeepsWhatItHeld() throws {
    let original = HARFixtures.har(
      HARFixtures.entry("GET", "https://api.example.com/users/hubot", text: "from the file")
        .replacing(#""cache": {}"#, with: #""cache": {}, "_initiator": {"type": "script"}"#))
    let file = try HARFixtures.file(original, named: "users.har")
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: live, redacting: .default, environment: [:])
    #expect(HARFixtures.send(mock, "https://api.example.com/users/hubot").text == "from the file")
    _ = HARFixtures.send(mock, Self.user("octocat"))
    _ = HARFixtures.send(mock, Self.user("monalisa"))
    #expect(live.requests.count == 2)
    let entries = try HARFixtures.entries(of: Data(contentsOf: file))
    #expect(entries.count == 3)
    #expect((entries[0]["_initiator"] as? [String: Any])?["type"] as? String == "script")
    let urls = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
    #expect(
      urls == [
        "https://api.example.com/users/hubot",
        "https://api.example.com/users/octocat?access_token=REDACTED",
        "https://api.example.com/users/monalisa?access_token=REDACTED",
      ])
  }

  /// What the reader does not read stays in the file as it was, byte for byte, even what
  /// Foundation's JSONSerialization cannot read (`1e999`, a lone surrogate, a key twice).
  @Test func recordMissingAppendsWithoutRewritingWhatTheFileHeld() throws {
    let original = HARFixtures.har(
      HARFixtures.entry("GET", "https://api.example.com/users/hubot", text: "from the file")
        .replacing(#""time": 1"#, with: #""time": 1e999, "_odd": "\ud800", "_odd": 2"#))
    let file = try HARFixtures.file(original, named: "users.har")
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: Self.liveSession(), redacting: .default,
      environment: [:])
    _ = HARFixtures.send(mock, Self.user("octocat"))
    let written = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    let end = try #require(original.range(of: "]}}", options: .backwards))
    #expect(written.hasPrefix(String(original[..<end.lowerBound])), "\(written)")
    #expect(written.contains("users/octocat?access_token=REDACTED"))
    let reread = try URLSessionMock(
      replaying: file, mode: .replay, from: URLSessionMock(), environment: [:])
    #expect(HARFixtures.send(reread, "https://api.example.com/users/hubot").text == "from the file")
    #expect(HARFixtures.send(reread, Self.user("octocat")).status == 200)
    // A request recorded now is named like the file's own entries when it answers again.
    _ = HARFixtures.send(mock, Self.user("octocat"))
    let answeredBy = mock.exchanges.last?.answeredBy ?? "nothing"
    #expect(
      answeredBy.hasPrefix("users.har entry 2 (GET https://api.example.com/users/octocat"),
      "\(answeredBy)")
  }

  @Test func recordSendsEverythingLiveAndRewritesTheFile() throws {
    let file = try HARFixtures.file(
      HARFixtures.har(
        HARFixtures.entry("GET", "https://api.example.com/users/octocat", text: "old")),
      named: "users.har")
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: .record, from: live, redacting: .default, environment: [:])
    #expect(HARFixtures.send(mock, Self.user("octocat")).text.contains("live-token-octocat"))
    #expect(HARFixtures.send(mock, Self.user("octocat")).text.contains("live-token-octocat"))
    #expect(live.requests.count == 2)
    let entries = try HARFixtures.entries(of: Data(contentsOf: file))
    #expect(entries.count == 2)
    let bodies = entries.compactMap {
      (($0["response"] as? [String: Any])?["content"] as? [String: Any])?["text"] as? String
    }
    #expect(bodies.allSatisfy { !$0.contains("old") && $0.contains("REDACTED") })
  }

  @Test func eachRecordedExchangeIsWrittenAtOnceAndWhole() throws {
    let folder = try HARFixtures.folder()
    let file = folder.appendingPathComponent("atomic.har")
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: Self.liveSession(), environment: [:])
    for (index, login) in ["a", "b", "c"].enumerated() {
      _ = HARFixtures.send(mock, Self.user(login))
      // After each exchange the file is a complete HAR document holding all of them so far.
      let data = try Data(contentsOf: file)
      #expect(try HARFixtures.entries(of: data).count == index + 1)
      let reread = try URLSessionMock(
        replaying: file, mode: .replay, from: URLSessionMock(), environment: [:])
      #expect(HARFixtures.send(reread, Self.user(login)).status == 200)
      // Nothing but the file is left in its folder: the temporary file was renamed over it.
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["atomic.har"])
    }
  }

  @Test func aRedactedReplayAnswersForTheURLAsSentNotAsRedacted() throws {
    let har = HARFixtures.har(
      HARFixtures.entry("GET", "https://api.example.com/me?access_token=REDACTED", text: "me"))
    let mock = try URLSessionMock(
      replaying: try HARFixtures.file(har), mode: .replay, from: URLSessionMock(),
      redacting: .default, environment: [:])
    let sent = "https://api.example.com/me?access_token=s3cr3t"
    // Twice: the second answer is the one the stub keeps ready for the URL.
    for _ in 0..<2 {
      let answer = HARFixtures.send(mock, sent)
      #expect(answer.text == "me")
      #expect(answer.response?.url?.absoluteString == sent)
    }
  }

  @Test func symmetricRedactionMatchesARealTokenWithTheRecordedPlaceholder() throws {
    let har = HARFixtures.har(
      HARFixtures.entry(
        "GET", "https://api.example.com/me?access_token=REDACTED&page=1", text: "me"),
      HARFixtures.entry(
        "POST", "https://api.example.com/login", text: "welcome",
        postData: #"{"password":"REDACTED","user":"octocat"}"#))
    let file = try HARFixtures.file(har)
    let mock = try URLSessionMock(
      replaying: file, mode: .replay, from: URLSessionMock(), redacting: .default,
      environment: [:])
    #expect(
      HARFixtures.send(mock, "https://api.example.com/me?page=1&access_token=s3cr3t").text == "me")
    let login = HARFixtures.request(
      "https://api.example.com/login", method: "POST",
      headers: ["Content-Type": "application/json"],
      body: #"{"user": "octocat", "password": "hunter2"}"#)
    #expect(HARFixtures.send(mock, login).text == "welcome")
    #expect(mock.requests.last?.httpBody == login.httpBody)  // the journal keeps what was sent

    let unredacted = try URLSessionMock(
      replaying: file, mode: .replay, from: URLSessionMock(), redacting: .none, environment: [:])
    expectReport(containing: "access_token=s3cr3t") {
      _ = HARFixtures.send(unredacted, "https://api.example.com/me?page=1&access_token=s3cr3t")
    }
  }

  @Test(arguments: [
    ("none", ReplayMode.recordMissing, 0), ("missing", .replay, 1), ("all", .replay, 2),
    ("ALL", .recordMissing, 2), ("", .recordMissing, 1),
  ])
  func theEnvironmentVariableOverridesTheMode(_ value: String, _ mode: ReplayMode, _ liveCalls: Int)
    throws
  {
    let file = try HARFixtures.file(
      HARFixtures.har(
        HARFixtures.entry(
          "GET", "https://api.example.com/users/octocat?access_token=REDACTED", text: "file")))
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: mode, from: live, environment: ["HTTPSESSIONKIT_RECORD": value])
    if value == "none" {
      // Replay only: a request the file lacks is unmatched and never reaches the live session.
      expectReport(containing: "No stub matches") { _ = HARFixtures.send(mock, Self.user("hubot")) }
    } else {
      _ = HARFixtures.send(mock, Self.user("hubot"))
    }
    _ = HARFixtures.send(mock, Self.user("octocat"))
    #expect(live.requests.count == liveCalls, "HTTPSESSIONKIT_RECORD=\(value)")
  }

  @Test func anUnknownEnvironmentValueThrowsNamingTheVariable() throws {
    #expect {
      _ = try URLSessionMock(
        replaying: try HARFixtures.file(HARFixtures.har()), mode: .replay, from: URLSessionMock(),
        environment: ["HTTPSESSIONKIT_RECORD": "sometimes"])
    } throws: { error in
      "\(error)" == #"HTTPSESSIONKIT_RECORD: expected none, missing or all, got "sometimes""#
    }
  }

  @Test(arguments: [ReplayMode.recordMissing, .record])
  func recordingIsRefusedOnCI(_ mode: ReplayMode) throws {
    let original = HARFixtures.har(
      HARFixtures.entry(
        "GET", "https://api.example.com/users/octocat?access_token=REDACTED", text: "file"))
    let file = try HARFixtures.file(original)
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: mode, from: live,
      environment: ["CI": "true", "HTTPSESSIONKIT_RECORD": "all"])
    #expect(HARFixtures.send(mock, Self.user("octocat")).text == "file")
    expectReport(
      containing: "GET https://api.example.com/users/hubot",
      "recording is refused because CI is set",
      "HTTPSESSIONKIT_RECORD=all", "Closest stubs"
    ) {
      #expect(HARFixtures.send(mock, Self.user("hubot")).errorCode == .resourceUnavailable)
    }
    #expect(live.requests.isEmpty)
    #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self) == original)
  }

  @Test func onCIAMissingFileIsNoErrorAndNothingIsWritten() throws {
    let file = try HARFixtures.folder().appendingPathComponent("new.har")
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: live, environment: ["CI": "1"])
    expectReport(containing: "CI is set (CI=1)", "mode .recordMissing") {
      _ = HARFixtures.send(mock, Self.user("octocat"))
    }
    #expect(live.requests.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: file.path))
  }

  @Test(arguments: ["", "0", "false", "FALSE"])
  func aCIVariableThatSaysNoDoesNotRefuse(_ value: String) throws {
    let file = try HARFixtures.folder().appendingPathComponent("new.har")
    let live = Self.liveSession()
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: live, environment: ["CI": value])
    #expect(HARFixtures.send(mock, Self.user("octocat")).status == 200)
    #expect(live.requests.count == 1)
  }

  @Test func aTransportErrorIsRecordedAndReplaysAsOne() throws {
    let file = try HARFixtures.folder().appendingPathComponent("errors.har")
    let live = URLSessionMock(error: URLError(.notConnectedToInternet))
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: live, environment: [:])
    #expect(
      HARFixtures.send(mock, "https://api.example.com/a").errorCode == .notConnectedToInternet)
    let replay = try URLSessionMock(
      replaying: file, mode: .replay, from: URLSessionMock(), environment: [:])
    #expect(
      HARFixtures.send(replay, "https://api.example.com/a").errorCode == .networkConnectionLost)
  }
}
