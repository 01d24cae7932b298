import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Reading HAR files as browsers and proxies export them, and replaying their entries.
@Suite struct HARReplayTests {
  /// An export as Chrome's network panel writes it: `_initiator`, `_priority`, `-1` sizes,
  /// compressed content with `_transferSize`, base64 binary content, h2 pseudo-headers, a POST
  /// with `postData`, and a failed request (status 0 with `_error`).
  static let chrome = """
    {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
      "pages": [{"startedDateTime": "2026-11-30T10:00:00.000Z", "id": "page_1", "title": "https://app.example.com/",
                 "pageTimings": {"onContentLoad": 120.5, "onLoad": 300}}],
      "entries": [
        {"_initiator": {"type": "script", "stack": {"callFrames": []}}, "_priority": "High",
         "_resourceType": "fetch", "cache": {}, "connection": "443", "pageref": "page_1",
         "request": {"method": "GET", "url": "https://api.example.com/users/octocat?tab=repos&page=2",
           "httpVersion": "http/2.0",
           "headers": [{"name": ":authority", "value": "api.example.com"}, {"name": ":method", "value": "GET"},
                       {"name": "accept", "value": "application/json"}],
           "queryString": [{"name": "tab", "value": "repos"}, {"name": "page", "value": "2"}],
           "cookies": [], "headersSize": -1, "bodySize": 0},
         "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0",
           "headers": [{"name": "content-type", "value": "application/json; charset=utf-8"},
                       {"name": "content-encoding", "value": "gzip"},
                       {"name": "content-length", "value": "61"},
                       {"name": "transfer-encoding", "value": "chunked"},
                       {"name": "connection", "value": "keep-alive"},
                       {"name": "x-ratelimit-remaining", "value": "59"},
                       {"name": "set-cookie", "value": "a=1; Path=/"},
                       {"name": "set-cookie", "value": "b=2; Path=/"}],
           "cookies": [{"name": "a", "value": "1", "path": "/", "expires": null, "httpOnly": false, "secure": false}],
           "content": {"size": 45, "mimeType": "application/json", "compression": -16,
                       "text": "{\\"login\\":\\"octocat\\",\\"public_repos\\":8}"},
           "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 200, "_error": null},
         "serverIPAddress": "140.82.121.6", "startedDateTime": "2026-11-30T10:00:00.100Z", "time": 42.1,
         "timings": {"blocked": 1.2, "dns": -1, "ssl": -1, "connect": -1, "send": 0.1, "wait": 40, "receive": 0.8,
                     "_blocked_queueing": 0.5}},
        {"_initiator": {"type": "parser", "url": "https://app.example.com/", "lineNumber": 12},
         "_resourceType": "image", "cache": {}, "pageref": "page_1",
         "request": {"method": "GET", "url": "https://cdn.example.com/pixel.png", "httpVersion": "http/2.0",
           "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
         "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0",
           "headers": [{"name": "content-type", "value": "image/png"}], "cookies": [],
           "content": {"size": 4, "mimeType": "image/png", "text": "iVBORw==", "encoding": "base64"},
           "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 70},
         "startedDateTime": "2026-11-30T10:00:00.200Z", "time": 3, "timings": {"send": 0, "wait": 3, "receive": 0}},
        {"_initiator": {"type": "script"}, "_resourceType": "xhr", "cache": {},
         "request": {"method": "POST", "url": "https://api.example.com/graphql", "httpVersion": "http/2.0",
           "headers": [{"name": "content-type", "value": "application/json"}], "queryString": [], "cookies": [],
           "headersSize": -1, "bodySize": 17,
           "postData": {"mimeType": "application/json", "text": "{\\"query\\":\\"{me}\\"}"}},
         "response": {"status": 201, "statusText": "Created", "httpVersion": "http/2.0",
           "headers": [], "cookies": [], "content": {"size": 0, "mimeType": "x-unknown"},
           "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 50},
         "startedDateTime": "2026-11-30T10:00:00.300Z", "time": 5, "timings": {"send": 0, "wait": 5, "receive": 0}},
        {"_initiator": {"type": "script"}, "_resourceType": "fetch", "cache": {},
         "request": {"method": "GET", "url": "https://tracker.example.com/beacon", "httpVersion": "",
           "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
         "response": {"status": 0, "statusText": "", "httpVersion": "", "headers": [], "cookies": [],
           "content": {"size": 0, "mimeType": "x-unknown"}, "redirectURL": "", "headersSize": -1,
           "bodySize": -1, "_transferSize": 0, "_error": "net::ERR_BLOCKED_BY_CLIENT"},
         "startedDateTime": "2026-11-30T10:00:00.400Z", "time": 0,
         "timings": {"blocked": -1, "dns": -1, "ssl": -1, "connect": -1, "send": 0, "wait": 0, "receive": 0}}
      ]}}
    """

  @Test func aChromeExportReplaysEachEntry() throws {
    let (mock, live) = try HARFixtures.replaying(Self.chrome)

    let user = HARFixtures.send(mock, "https://api.example.com/users/octocat?tab=repos&page=2")
    #expect(user.status == 200)
    #expect(user.text == #"{"login":"octocat","public_repos":8}"#)
    #expect(user.header("Content-Type") == "application/json; charset=utf-8")
    #expect(user.header("X-RateLimit-Remaining") == "59")
    // The body in the file is decoded: the wire's encoding and length no longer describe it.
    #expect(user.header("Content-Encoding") == nil)
    #expect(user.header("Transfer-Encoding") == nil)
    #expect(user.header("Connection") == nil)
    #expect(user.header("Content-Length") == String(user.data?.count ?? -1))
    #expect(user.header("Set-Cookie") == "a=1; Path=/, b=2; Path=/")

    let pixel = HARFixtures.send(mock, "https://cdn.example.com/pixel.png")
    #expect(pixel.data == Data([0x89, 0x50, 0x4E, 0x47]))
    #expect(pixel.header("Content-Type") == "image/png")

    let created = HARFixtures.send(
      mock,
      HARFixtures.request(
        "https://api.example.com/graphql", method: "POST", body: #"{"query":"{me}"}"#))
    #expect(created.status == 201)
    #expect(created.data == Data())
    #expect(created.header("Content-Type") == nil)  // "x-unknown" names no type

    let blocked = HARFixtures.send(mock, "https://tracker.example.com/beacon")
    #expect(blocked.errorCode == .networkConnectionLost)
    let description =
      (blocked.error as? URLError)?.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
    #expect(description.contains("ERR_BLOCKED_BY_CLIENT"))
    #expect(live.requests.isEmpty)
  }

  @Test func aReplayedEntryMatchesItsWholeURLAndBodyExactly() throws {
    let (mock, _) = try HARFixtures.replaying(Self.chrome)
    // The same query in another order is the same request.
    #expect(
      HARFixtures.send(mock, "https://api.example.com/users/octocat?page=2&tab=repos").status == 200
    )
    let misses = [
      HARFixtures.request("https://api.example.com/users/octocat?tab=repos"),  // an item less
      HARFixtures.request("https://api.example.com/users/octocat?tab=repos&page=2&x=1"),  // more
      HARFixtures.request("https://api.example.com/users/octocat"),
      HARFixtures.request("http://api.example.com/users/octocat?tab=repos&page=2"),  // scheme
      HARFixtures.request("https://api.example.org/users/octocat?tab=repos&page=2"),  // host
      HARFixtures.request("https://api.example.com/users/octocat/?tab=repos&page=2"),  // slash
      HARFixtures.request("https://api.example.com/users/octocat?tab=repos&page=2", method: "PUT"),
      HARFixtures.request(
        "https://api.example.com/graphql", method: "POST", body: #"{"query":"{you}"}"#),
    ]
    for request in misses {
      expectReport(containing: "No stub matches") {
        #expect(HARFixtures.send(mock, request).errorCode == .resourceUnavailable)
      }
    }
  }

  @Test func theNearMissReportSaysWhatDifferedFromTheRecording() throws {
    let (mock, _) = try HARFixtures.replaying(Self.chrome)
    expectReport(containing: "query: expected page=2&tab=repos, got page=3&tab=repos") {
      _ = HARFixtures.send(mock, "https://api.example.com/users/octocat?tab=repos&page=3")
    }
  }

  @Test func identicalRequestsReplayInRecordedOrderAndTheLastRepeats() throws {
    let har = HARFixtures.har(
      HARFixtures.entry("GET", "https://x.test/counter", text: "1"),
      HARFixtures.entry("GET", "https://x.test/other", text: "other"),
      HARFixtures.entry("GET", "https://x.test/counter", status: 503, text: "2"),
      HARFixtures.entry("GET", "https://x.test/counter", text: "3"))
    let (mock, _) = try HARFixtures.replaying(har)
    let answers = (0..<5).map { _ in HARFixtures.send(mock, "https://x.test/counter") }
    #expect(answers.map(\.text) == ["1", "2", "3", "3", "3"])
    #expect(answers.map(\.status) == [200, 503, 200, 200, 200])
    #expect(HARFixtures.send(mock, "https://x.test/other").text == "other")
  }

  @Test func requestsWithDifferentBodiesReplaySeparately() throws {
    let har = HARFixtures.har(
      HARFixtures.entry("POST", "https://x.test/login", status: 401, text: "no", postData: "pw=a"),
      HARFixtures.entry("POST", "https://x.test/login", text: "yes", postData: "pw=b"))
    let (mock, _) = try HARFixtures.replaying(har)
    let wrong = HARFixtures.request("https://x.test/login", method: "POST", body: "pw=a")
    let right = HARFixtures.request("https://x.test/login", method: "POST", body: "pw=b")
    #expect(HARFixtures.send(mock, right).text == "yes")
    #expect(HARFixtures.send(mock, wrong).status == 401)
    #expect(HARFixtures.send(mock, right).text == "yes")
  }

  /// A JSON POST recorded with one key order and sent again with another: `JSONEncoder` on
  /// Linux does not keep key order from one encode to the next.
  static let todoPost = HARFixtures.har(
    HARFixtures.entry(
      "POST", "https://x.test/todos", status: 201, text: "created",
      postData: #"{"title":"eggs","done":false,"tags":["a","b"],"count":1}"#))

  @Test func aRecordedJSONBodyMatchesAsAJSONValue() throws {
    let (mock, _) = try HARFixtures.replaying(Self.todoPost)
    let reordered = HARFixtures.request(
      "https://x.test/todos", method: "POST",
      body: #"{ "count": 1.0, "done": false, "tags": ["a", "b"], "title": "eggs" }"#)
    #expect(HARFixtures.send(mock, reordered).status == 201)
    let bundle = try MockBundle(contentsOf: HARFixtures.file(Self.todoPost))
    #expect(route(URLSessionMock(bundle: bundle), reordered).status == 201)
  }

  @Test func aRecordedJSONBodyStillComparesItsValues() throws {
    let (mock, _) = try HARFixtures.replaying(Self.todoPost)
    let other = HARFixtures.request(
      "https://x.test/todos", method: "POST",
      body: #"{"title":"eggs","done":true,"tags":["a","b"],"count":1}"#)
    let reversed = HARFixtures.request(
      "https://x.test/todos", method: "POST",
      body: #"{"title":"eggs","done":false,"tags":["b","a"],"count":1}"#)
    expectReport(containing: "body $.done: expected false, got true") {
      #expect(HARFixtures.send(mock, other).errorCode == .resourceUnavailable)
    }
    expectReport(containing: "body $.tags[0]: expected \"a\", got \"b\"") {
      #expect(HARFixtures.send(mock, reversed).errorCode == .resourceUnavailable)
    }
  }

  @Test func aBodyThatIsNotJSONStillMatchesByteForByte() throws {
    let har = HARFixtures.har(
      HARFixtures.entry("POST", "https://x.test/form", text: "ok", postData: "a=1&b=2"))
    let (mock, _) = try HARFixtures.replaying(har)
    let sent = HARFixtures.request("https://x.test/form", method: "POST", body: "a=1&b=2")
    #expect(HARFixtures.send(mock, sent).text == "ok")
    expectReport(containing: "No stub matches") {
      _ = HARFixtures.send(
        mock, HARFixtures.request("https://x.test/form", method: "POST", body: "b=2&a=1"))
    }
  }

  @Test func entriesWithEqualJSONBodiesReplayAsOneSequence() throws {
    let har = HARFixtures.har(
      HARFixtures.entry("POST", "https://x.test/n", text: "1", postData: #"{"a":1,"b":2}"#),
      HARFixtures.entry("POST", "https://x.test/n", text: "2", postData: #"{"b":2,"a":1}"#))
    let (mock, _) = try HARFixtures.replaying(har)
    let sent = HARFixtures.request("https://x.test/n", method: "POST", body: #"{"a":1,"b":2}"#)
    #expect([HARFixtures.send(mock, sent).text, HARFixtures.send(mock, sent).text] == ["1", "2"])
  }

  @Test func theNearMissReportNamesTheEntryFromOneAndDescribesItOnce() throws {
    let har = HARFixtures.har(
      HARFixtures.entry("GET", "https://x.test/first"),
      HARFixtures.entry("POST", "https://x.test/todos", postData: #"{"title":"eggs"}"#))
    let sent = HARFixtures.request(
      "https://x.test/todos", method: "POST", body: #"{"title":"ham"}"#)
    let description = #"POST https://x.test/todos JSON body {"title":"eggs"}"#
    let bundle = try MockBundle(contentsOf: HARFixtures.file(har))
    let (replaying, _) = try HARFixtures.replaying(har)
    for mock in [URLSessionMock(bundle: bundle), replaying] {
      let reports = capturedReports { _ = route(mock, sent) }
      let message = reports.map(\.message).joined(separator: "\n")
      #expect(message.contains("session.har entry 2 (\(description))"), "\(message)")
      #expect(message.components(separatedBy: description).count == 2, "\(message)")
    }
  }

  @Test func aURLIsLiteralNotAPattern() throws {
    let har = HARFixtures.har(
      HARFixtures.entry("GET", "https://x.test/files/%7Bname%7D//raw", text: "braces"),
      HARFixtures.entry("GET", "https://x.test/caf%C3%A9?q=a%20b", text: "decoded"))
    let (mock, _) = try HARFixtures.replaying(har)
    #expect(HARFixtures.send(mock, "https://x.test/files/%7Bname%7D//raw").text == "braces")
    #expect(HARFixtures.send(mock, "https://x.test/caf%C3%A9?q=a+b").text == "decoded")
    #expect(HARFixtures.send(mock, "https://X.TEST:443/caf%C3%A9?q=a%20b").text == "decoded")
    let other = try HARFixtures.capturedMiss(mock, "https://x.test/files/readme//raw")
    #expect(other.contains("path: expected /files/{name}//raw, got /files/readme//raw"))
  }

  /// Firefox: `cookies` and `queryString` filled, `postData` with `params`, content without
  /// `text` for empty bodies, `bodySize` -1, `pageref`, no `_` fields.
  static let firefox = """
    {"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "120.0"},
      "browser": {"name": "Firefox", "version": "120.0"}, "pages": [],
      "entries": [
        {"pageref": "page_1", "startedDateTime": "2026-11-30T10:00:00.000+01:00",
         "request": {"bodySize": 21, "method": "POST", "url": "https://api.example.com/session",
           "httpVersion": "HTTP/2", "headers": [{"name": "Content-Type", "value": "application/x-www-form-urlencoded"}],
           "cookies": [{"name": "sid", "value": "x"}], "queryString": [], "headersSize": 412,
           "postData": {"mimeType": "application/x-www-form-urlencoded",
                        "params": [{"name": "user", "value": "octocat"}], "text": "user=octocat&remember=1"}},
         "response": {"status": 204, "statusText": "No Content", "httpVersion": "HTTP/2",
           "headers": [{"name": "date", "value": "Mon, 30 Nov 2026 09:00:00 GMT"}], "cookies": [],
           "content": {"mimeType": "text/plain", "size": 0, "comment": "no body"},
           "redirectURL": "", "headersSize": 120, "bodySize": -1},
         "cache": {}, "timings": {"blocked": 0, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 30, "receive": 0},
         "time": 30, "_securityState": "secure", "serverIPAddress": "1.2.3.4", "connection": "443"}
      ]}}
    """

  /// Charles: `comment` fields, `-1` sizes everywhere, `encoding` on every text, `_`-less but
  /// with `connection`; headers with repeated names.
  static let charles = """
    {"log": {"version": "1.2", "creator": {"name": "Charles Proxy", "version": "4.6.6"},
      "entries": [
        {"startedDateTime": "2026-11-30T10:00:00.000+00:00", "time": 88,
         "request": {"method": "GET", "url": "http://legacy.example.com/api/v1/items?limit=10", "httpVersion": "HTTP/1.1",
           "cookies": [], "headers": [{"name": "Host", "value": "legacy.example.com"}],
           "queryString": [{"name": "limit", "value": "10"}], "headersSize": -1, "bodySize": -1, "comment": ""},
         "response": {"_charlesStatus": "COMPLETE", "status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
           "cookies": [], "headers": [{"name": "Content-Type", "value": "application/json"},
                                      {"name": "Vary", "value": "Accept"}, {"name": "Vary", "value": "Origin"}],
           "content": {"size": -1, "mimeType": "application/json", "text": "WzEsMiwzXQ==", "encoding": "base64"},
           "redirectURL": null, "headersSize": -1, "bodySize": -1, "comment": ""},
         "serverIPAddress": "10.0.0.2", "cache": {},
         "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 1, "wait": 86, "receive": 1},
         "comment": ""}
      ]}}
    """

  /// Proxyman: custom `_` fields of its own, an empty `text`, a redirect with `redirectURL`.
  static let proxyman = """
    {"log": {"version": "1.2", "creator": {"name": "Proxyman", "version": "4.14.0"},
      "entries": [
        {"_id": "1A2B", "_proxymanFlowID": 17, "startedDateTime": "2026-11-30T10:00:00.000Z", "time": 12,
         "request": {"method": "GET", "url": "https://old.example.com/home", "httpVersion": "HTTP/1.1",
           "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
           "postData": {"mimeType": "", "text": ""}},
         "response": {"status": 301, "statusText": "Moved Permanently", "httpVersion": "HTTP/1.1",
           "headers": [{"name": "Location", "value": "https://new.example.com/home"}], "cookies": [],
           "content": {"size": 0, "mimeType": "text/html", "text": ""},
           "redirectURL": "https://new.example.com/home", "headersSize": -1, "bodySize": 0},
         "cache": {}, "timings": {"send": -1, "wait": 12, "receive": -1}}
      ]}}
    """

  @Test func firefoxCharlesAndProxymanExportsLoad() throws {
    let (firefox, _) = try HARFixtures.replaying(Self.firefox)
    let login = HARFixtures.request(
      "https://api.example.com/session", method: "POST", body: "user=octocat&remember=1")
    #expect(HARFixtures.send(firefox, login).status == 204)
    #expect(HARFixtures.send(firefox, login).data == Data())

    let (charles, _) = try HARFixtures.replaying(Self.charles)
    let items = HARFixtures.send(charles, "http://legacy.example.com/api/v1/items?limit=10")
    #expect(items.text == "[1,2,3]")
    #expect(items.header("Vary") == "Accept, Origin")

    let (proxyman, _) = try HARFixtures.replaying(Self.proxyman)
    // The recording holds the redirect itself; the mock follows it as it would a stub's, and
    // the target is not in the file.
    let redirect = try HARFixtures.capturedMiss(proxyman, "https://old.example.com/home")
    #expect(redirect.contains("new.example.com/home"))
  }

  /// JSON files may be UTF-16 or UTF-32 (RFC 4627), as `JSONSerialization` reads them.
  @Test(arguments: [String.Encoding.utf16LittleEndian, .utf16BigEndian, .utf16, .utf32])
  func aUTF16OrUTF32FileReadsAsItsText(_ encoding: String.Encoding) throws {
    let har = HARFixtures.har(
      HARFixtures.entry("GET", "https://x.test/caf\u{E9}", text: "\u{E9}t\u{E9}"))
    let file = try HARFixtures.file("")
    try #require(har.data(using: encoding)).write(to: file)
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: file))
    #expect(route(mock, "GET", "https://x.test/caf%C3%A9").text == "\u{E9}t\u{E9}")
    let replaying = try URLSessionMock(
      replaying: file, mode: .replay, from: URLSessionMock(), environment: [:])
    #expect(route(replaying, "GET", "https://x.test/caf%C3%A9").status == 200)
  }

  @Test func anEntryWithoutContentTypeGetsItsMimeType() throws {
    let har = HARFixtures.har(HARFixtures.entry("GET", "https://x.test/a", text: "plain"))
    let (mock, _) = try HARFixtures.replaying(har)
    #expect(HARFixtures.send(mock, "https://x.test/a").header("Content-Type") == "text/plain")
  }

  @Test func anEmptyHARLoadsAndMatchesNothing() throws {
    let (mock, _) = try HARFixtures.replaying(HARFixtures.har())
    expectReport(containing: "No stub matches") {
      _ = HARFixtures.send(mock, "https://x.test/a")
    }
  }
}

extension HARFixtures {
  /// The failure report for `string`, which no stub may match.
  static func capturedMiss(_ mock: URLSessionMock, _ string: String) throws -> String {
    var message = ""
    let reports = capturedReports { _ = send(mock, string) }
    message = reports.map(\.message).joined(separator: "\n")
    #expect(reports.count == 1, "expected one report, got \(reports)")
    return message
  }
}
