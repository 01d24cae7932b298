import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `SpySession.recordedBundle(redacting:)` and `harData(redacting:)`: what a forwarding spy saw,
/// as a bundle and as HAR, with no secret left in it.
@Suite struct RecordingTests {
  /// A live session answering with secrets in a header, a cookie and a JSON body at depth.
  static func live() -> URLSessionMock {
    let live = URLSessionMock()
    live.stub(
      .any,
      with: .json(
        [
          "user": ["login": "octocat", "session": ["refresh_token": "resp-refresh-1"]],
          "token": "resp-token-2",
        ],
        headers: [
          "Set-Cookie": "session=resp-cookie-3; HttpOnly", "X-Auth-Token": "resp-header-4",
          "X-Request-Id": "req-77",
        ]))
    return live
  }

  /// A request with a planted secret in every place: headers, a cookie, the query and a JSON
  /// body at depth.
  static let planted = HARFixtures.request(
    "https://api.example.com/v1/items?api_key=query-key-5&Signature=query-sig-6&page=2",
    method: "POST",
    headers: [
      "Authorization": "Bearer header-bearer-7", "cookie": "sid=req-cookie-8; theme=dark",
      "X-API-KEY": "header-key-9", "Content-Type": "application/json",
    ],
    body:
      #"{"items": [{"name": "a", "credentials": {"password": "body-password-10"}}], "client_secret": "body-secret-11"}"#
  )

  static let secrets = [
    "resp-refresh-1", "resp-token-2", "resp-cookie-3", "resp-header-4", "query-key-5",
    "query-sig-6", "header-bearer-7", "req-cookie-8", "header-key-9", "body-password-10",
    "body-secret-11",
  ]

  @Test func aRecordingNeverWritesASecretTheDefaultRedactionNames() throws {
    let spy = SpySession(wrapping: Self.live())
    #expect(HARFixtures.send(spy, Self.planted).status == 200)
    let har = try spy.harData(redacting: .default)
    let text = String(decoding: har, as: UTF8.self)
    for secret in Self.secrets {
      #expect(!text.contains(secret), "the HAR leaked \(secret)")
    }
    // What is not secret stays, so the recording is still useful.
    for kept in ["octocat", "page=2", "req-77", #"\"name\":\"a\""#, "application/json"] {
      #expect(text.contains(kept), "the HAR lost \(kept)")
    }
    // Through a replay file too: scan what is written on disk.
    let file = try HARFixtures.folder().appendingPathComponent("planted.har")
    let mock = try URLSessionMock(
      replaying: file, mode: .recordMissing, from: Self.live(), redacting: .default,
      environment: [:])
    _ = HARFixtures.send(mock, Self.planted)
    let written = String(decoding: try Data(contentsOf: file), as: UTF8.self)
    for secret in Self.secrets {
      #expect(!written.contains(secret), "the file leaked \(secret)")
    }
    #expect(written.contains("octocat"))
  }

  @Test func theHARIsValidHAR12WithEveryRequiredField() throws {
    let spy = SpySession(wrapping: Self.live())
    _ = HARFixtures.send(spy, Self.planted)
    _ = HARFixtures.send(spy, "https://api.example.com/v1/health")
    let data = try spy.harData(redacting: .default)
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let log = try #require(root["log"] as? [String: Any])
    #expect(log["version"] as? String == "1.2")
    #expect((log["creator"] as? [String: Any])?["name"] as? String == "HTTPSessionKit")
    let entries = try HARFixtures.entries(of: data)
    #expect(entries.count == 2)
    for entry in entries {
      for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
        #expect(entry[key] != nil, "an entry lacks \(key)")
      }
      let request = try #require(entry["request"] as? [String: Any])
      for key in [
        "method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize",
        "bodySize",
      ] {
        #expect(request[key] != nil, "a request lacks \(key)")
      }
      let response = try #require(entry["response"] as? [String: Any])
      for key in [
        "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL",
        "headersSize", "bodySize",
      ] {
        #expect(response[key] != nil, "a response lacks \(key)")
      }
      let content = try #require(response["content"] as? [String: Any])
      #expect(content["size"] is Int && content["mimeType"] is String)
    }
    let first = try #require(entries.first?["request"] as? [String: Any])
    #expect(first["method"] as? String == "POST")
    let post = try #require(first["postData"] as? [String: Any])
    #expect(post["mimeType"] as? String == "application/json")
    let query = try #require(first["queryString"] as? [[String: String]])
    #expect(query.contains { $0 == ["name": "page", "value": "2"] })
  }

  @Test func aRecordedBundleReplaysWhatTheSpySaw() throws {
    let live = URLSessionMock()
    live.stub(.get("/counter"), with: [.text("1"), .text("2")])
    live.stub(
      .get("/png"), with: .data(Data([0, 1, 2, 255]), headers: ["Content-Type": "image/png"]))
    let spy = SpySession(wrapping: live)
    for path in ["/counter", "/counter", "/png"] {
      _ = HARFixtures.send(spy, "https://x.test\(path)")
    }
    let bundle = try spy.recordedBundle(redacting: .default)
    let replay = URLSessionMock(bundle: bundle)
    let counts = (0..<3).map { _ in HARFixtures.send(replay, "https://x.test/counter").text }
    #expect(counts == ["1", "2", "2"])
    let png = HARFixtures.send(replay, "https://x.test/png")
    #expect(png.data == Data([0, 1, 2, 255]))
    #expect(png.header("Content-Type") == "image/png")

    // The same bundle through HAR and back is the same bundle.
    let file = try HARFixtures.folder().appendingPathComponent("spy.har")
    try spy.harData(redacting: .default).write(to: file)
    #expect(try MockBundle(contentsOf: file) == bundle)
    #expect(try MockBundle(contentsOf: file).harData() == bundle.harData())
  }

  @Test func aSpyKeepsTheBodyOfEveryForwardedExchange() throws {
    let live = URLSessionMock()
    let body = Data((0..<100_000).map { UInt8($0 % 251) })
    live.stub(.get("/big"), with: .data(body))
    let spy = SpySession(wrapping: live)
    _ = HARFixtures.send(spy, "https://x.test/big")
    #expect(spy.exchanges.first?.body == body)
    let replay = URLSessionMock(bundle: try spy.recordedBundle(redacting: .none))
    #expect(HARFixtures.send(replay, "https://x.test/big").data == body)
  }

  @Test func aBodyTheSpyCutIsRefusedNotRecordedInPart() throws {
    let live = URLSessionMock()
    live.stub(.get("/huge"), with: .data(Data(count: Exchange.bodyLimit + 1)))
    let spy = SpySession(wrapping: live)
    _ = HARFixtures.send(spy, "https://x.test/huge")
    #expect {
      try spy.harData(redacting: .default)
    } throws: { error in
      "\(error)".contains("exchange #1") && "\(error)".contains("longer than Exchange.bodyLimit")
    }
  }

  @Test func aFailedExchangeIsRecordedAsHARsStatusZero() throws {
    let spy = SpySession(wrapping: URLSessionMock(error: URLError(.timedOut)))
    _ = HARFixtures.send(spy, "https://x.test/slow")
    let entries = try HARFixtures.entries(of: spy.harData(redacting: .default))
    let response = try #require(entries.first?["response"] as? [String: Any])
    #expect(response["status"] as? Int == 0)
    #expect((response["_error"] as? String)?.contains("timedOut") == true)
    let replay = URLSessionMock(bundle: try spy.recordedBundle(redacting: .default))
    #expect(HARFixtures.send(replay, "https://x.test/slow").errorCode == .networkConnectionLost)
  }
}
