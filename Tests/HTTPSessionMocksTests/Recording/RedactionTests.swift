import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `Redaction`: which values a recording replaces with `REDACTED`.
@Suite struct RedactionTests {
  /// The HAR text of one exchange of `request` with a live session answering `response`,
  /// recorded with `redaction`.
  static func recorded(
    _ request: URLRequest, answering response: StubResponse = .status(204),
    redacting redaction: Redaction
  ) throws -> String {
    let live = URLSessionMock()
    live.stub(.any, with: response)
    let spy = SpySession(wrapping: live)
    _ = HARFixtures.send(spy, request)
    return String(decoding: try spy.harData(redacting: redaction), as: UTF8.self)
  }

  @Test func headerNamesCompareInAnyCase() throws {
    let request = HARFixtures.request(
      "https://x.test/a",
      headers: ["AUTHORIZATION": "Bearer one", "x-trace": "two", "Proxy-Authorization": "three"])
    let text = try Self.recorded(request, redacting: .default.header("X-TRACE"))
    for secret in ["one", "two", "three"] { #expect(!text.contains("\"\(secret)\"")) }
    #expect(!text.contains("Bearer"))
    #expect(text.components(separatedBy: "REDACTED").count - 1 == 3)
  }

  /// One list of secrets: every header a failure report masks by default is redacted from a
  /// recording by default too, whole names and names that merely contain a secret word.
  @Test func everyHeaderAReportMasksIsRedactedFromARecording() throws {
    let names = [
      "Authorization", "Proxy-Authorization", "X-Access-Token", "X-Client-Secret",
      "X-Api-Key", "Api_Key", "X-Password-Hint",
    ]
    for name in names { #expect(ReportRedaction.default.masks(name), "\(name)") }
    var headers: [String: String] = [:]
    for (index, name) in names.enumerated() { headers[name] = "secret-\(index)-value" }
    let text = try Self.recorded(
      HARFixtures.request("https://x.test/a", headers: headers), redacting: .default)
    for index in names.indices {
      #expect(!text.contains("secret-\(index)-value"), "\(names[index])")
    }
    #expect(text.components(separatedBy: "REDACTED").count - 1 == names.count)
  }

  @Test func noneRedactsNothing() throws {
    let request = HARFixtures.request(
      "https://x.test/a?token=t1", headers: ["Authorization": "Bearer a1"],
      body: #"{"password":"p1"}"#)
    let text = try Self.recorded(
      request, answering: .json(["token": "r1"], headers: ["Set-Cookie": "c=c1"]),
      redacting: .none)
    for value in ["t1", "a1", "p1", "r1", "c1"] { #expect(text.contains(value), "lost \(value)") }
    #expect(!text.contains("REDACTED"))
  }

  @Test func queryItemsAreRedactedByNameInAnyCaseAndTheRestIsKeptAsSent() throws {
    let request = HARFixtures.request(
      "https://x.test/search?q=caf%C3%A9&API_KEY=k1&sig=s1&tokens=kept&session=s2")
    let text = try Self.recorded(request, redacting: .default.query("Session"))
    #expect(
      text.contains(
        "https://x.test/search?q=caf%C3%A9&API_KEY=REDACTED&sig=REDACTED&tokens=kept&session=REDACTED"
      ))
    for secret in ["k1", "s1", "s2"] { #expect(!text.contains("=\(secret)")) }
  }

  @Test func jsonFieldsAreRedactedAtAnyDepthWholeValuesIncluded() throws {
    // The secret number is long: a short one (it was 42) can turn up in the file's times.
    let body = #"""
      {"a": {"b": [{"ssn": "123-45"}, {"token": {"value": "nested-1"}}]}, "secret": 918273645, "keep": "me"}
      """#
    let request = HARFixtures.request(
      "https://x.test/a", method: "POST", headers: ["Content-Type": "application/json"],
      body: body)
    let text = try Self.recorded(
      request, answering: .json(["list": [["password": "resp-1"]]]),
      redacting: .default.jsonField("ssn"))
    for secret in ["123-45", "nested-1", "918273645", "resp-1"] {
      #expect(!text.contains(secret), "leaked \(secret)")
    }
    #expect(text.contains(#"\"keep\":\"me\""#), "the field that is not secret was lost")
  }

  @Test func aBodyThatIsNotJSONIsLeftAsItIs() throws {
    let request = HARFixtures.request(
      "https://x.test/a", method: "POST", body: #"password: "p" (not JSON)"#)
    let text = try Self.recorded(request, redacting: .default)
    #expect(text.contains(#"password: \"p\" (not JSON)"#))
  }

  @Test func formBodiesAreRedactedLikeQueries() throws {
    let request = HARFixtures.request(
      "https://auth.example.com/oauth/token", method: "POST",
      headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
      body: "grant_type=refresh_token&refresh_token=rt-1&client_secret=cs-2&client_id=app")
    let text = try Self.recorded(request, redacting: .default)
    #expect(
      text.contains(
        "grant_type=refresh_token&refresh_token=REDACTED&client_secret=REDACTED&client_id=app"))
  }

  @Test func aLiteralIsReplacedEverywhere() throws {
    let request = HARFixtures.request(
      "https://x.test/accounts/ACCT-991/statements?owner=ACCT-991",
      headers: ["X-Account": "ACCT-991"], body: "account ACCT-991")
    let text = try Self.recorded(
      request, answering: .text("your account ACCT-991", headers: ["X-Echo": "ACCT-991"]),
      redacting: .none.replacing("ACCT-991", with: "ACCOUNT"))
    #expect(!text.contains("ACCT-991"))
    #expect(text.contains("https://x.test/accounts/ACCOUNT/statements?owner=ACCOUNT"))
    // Twice in the URL, once in queryString, the request header and body, the response header
    // and body.
    #expect(text.components(separatedBy: "ACCOUNT").count - 1 == 7)
  }

  @Test func aReplacementThatIsNoValidURLTextIsPercentEncoded() throws {
    let request = HARFixtures.request("https://x.test/users/alice")
    let text = try Self.recorded(request, redacting: .none.replacing("alice", with: "a user"))
    #expect(text.contains("https://x.test/users/a%20user"))
  }

  @Test func cookiesLoseTheirWholeValueInBothDirections() throws {
    let request = HARFixtures.request(
      "https://x.test/a", headers: ["Cookie": "sid=abc; theme=dark"])
    let text = try Self.recorded(
      request, answering: .status(200, headers: ["Set-Cookie": "sid=def; Path=/; HttpOnly"]),
      redacting: .default)
    #expect(!text.contains("sid="))
    #expect(!text.contains("HttpOnly"))
  }

  @Test func extendingReturnsANewValueAndLeavesTheOriginal() throws {
    let base = Redaction.default
    let extended = base.header("X-Trace")
    let request = HARFixtures.request("https://x.test/a", headers: ["X-Trace": "trace-1"])
    #expect(try Self.recorded(request, redacting: base).contains("trace-1"))
    #expect(try !Self.recorded(request, redacting: extended).contains("trace-1"))
  }
}
