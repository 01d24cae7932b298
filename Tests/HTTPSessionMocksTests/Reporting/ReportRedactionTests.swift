import Foundation
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Reports mask secret header values by default, so that tokens sent in a test stay out of CI
/// logs; `reportRedaction` changes what is masked.
@Suite struct ReportRedactionTests {
  private let token = "Bearer t0k3n-5ecr3t-v4lue"

  private func unmatchedReport(
    _ configure: (URLSessionMock) -> Void, headers: [String: String]
  ) -> String {
    let mock = URLSessionMock()
    configure(mock)
    let reports = reportMessages { _ = route(mock, "GET", "https://e.com/me", headers: headers) }
    #expect(reports.count == 1)
    return reports.first ?? ""
  }

  @Test func anUnmatchedRequestsSecretHeadersAreMaskedWithTheirLength() {
    let report = unmatchedReport(
      { $0.stub(.get("/other"), with: .status(200)) },
      headers: ["Authorization": token, "Cookie": "session=abcdef123456", "Accept": "text/plain"])
    #expect(!report.contains("t0k3n"))
    #expect(!report.contains("abcdef123456"))
    #expect(report.contains("Authorization: Bear… (25 characters, masked)"))
    #expect(report.contains("Cookie: sess… (20 characters, masked)"))
    #expect(report.contains("Accept: text/plain"))
  }

  @Test func aMatcherOnASecretHeaderSaysOnlyThatItDiffersWithBothLengths() {
    let report = unmatchedReport(
      { $0.stub(.get("/me").header("Authorization", "Bearer expected"), with: .status(200)) },
      headers: ["Authorization": token])
    #expect(
      report.contains(
        "- header Authorization: differs (expected 15 characters, got 25; values masked)\n"))
    #expect(!report.contains("expected\""))
    #expect(!report.contains("t0k3n"))
    // The stub's own description masks the value it expects too.
    #expect(report.contains("1. GET /me header Authorization: Bear… (15 characters, masked)"))
    #expect(!report.contains("Bearer expected"))
  }

  @Test func headersNamedLikeTokensSecretsAndKeysAreMasked() {
    let redaction = ReportRedaction.default
    for name in [
      "Authorization", "proxy-authorization", "COOKIE", "Set-Cookie", "X-Auth-Token",
      "X-Refresh-Token", "Client-Secret", "X-Api-Key", "x_api_key", "X-APIKEY", "X-Password",
    ] {
      #expect(redaction.masks(name), "\(name)")
    }
    for name in ["Accept", "Content-Type", "User-Agent", "X-Request-Id", "If-None-Match"] {
      #expect(!redaction.masks(name), "\(name)")
    }
    #expect(!ReportRedaction.none.masks("Authorization"))
    #expect(ReportRedaction.default.header("X-Session").masks("x-session"))
  }

  @Test func aShortValueShowsNoMoreThanAThirdOfItself() {
    let redaction = ReportRedaction.default
    #expect(redaction.shown("abc", ofHeader: "X-Token") == "a… (3 characters, masked)")
    #expect(redaction.shown("ab", ofHeader: "X-Token") == "… (2 characters, masked)")
    #expect(redaction.shown("x", ofHeader: "X-Token") == "… (1 character, masked)")
    #expect(redaction.shown("text/plain", ofHeader: "Accept") == "text/plain")
  }

  @Test func reportRedactionNoneShowsEveryValueAsSent() {
    let report = unmatchedReport(
      {
        $0.reportRedaction = .none
        $0.stub(.get("/me").header("Authorization", "Bearer expected"), with: .status(200))
      }, headers: ["Authorization": token])
    #expect(report.contains("Authorization: \(token)"))
    #expect(
      report.contains(#"- header Authorization: expected "Bearer expected", got "\#(token)""#))
  }

  @Test func anAddedHeaderIsMaskedToo() {
    let report = unmatchedReport(
      {
        $0.reportRedaction = .default.header("X-Session")
        $0.stub(.get("/other"), with: .status(200))
      }, headers: ["X-Session": "0123456789abcdef"])
    #expect(report.contains("X-Session: 0123… (16 characters, masked)"))
    #expect(!report.contains("0123456789abcdef"))
  }

  @Test func aFailedVerificationMasksTheSentHeadersAndTheMatcher() {
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(200))
    _ = route(mock, "GET", "https://e.com/me", headers: ["Authorization": token])
    let reports = reportMessages {
      mock.verify(.get("/me").header("Authorization", "Bearer other"), called: .once)
    }
    let report = reports.first ?? ""
    #expect(reports.count == 1)
    #expect(report.contains("Expected GET /me header Authorization: Bear… (12 characters, masked)"))
    #expect(report.contains("Authorization: Bear… (25 characters, masked)"))
    #expect(report.contains("differs (expected 12 characters, got 25; values masked)"))
    #expect(!report.contains("t0k3n"))
    #expect(!report.contains("Bearer other"))
  }

  @Test func aSpysReportsMaskToo() {
    let spy = SpySession()
    let request = routingRequest("GET", "https://e.com/me", headers: ["Authorization": token])
    spy.dataTask(with: request) { _, _, _ in }.resume()
    let reports = reportMessages { spy.verify(.post("/me"), called: .once) }
    #expect(reports.count == 1)
    #expect(reports.first?.contains("Authorization: Bear… (25 characters, masked)") == true)
    #expect(reports.first?.contains("t0k3n") == false)
    spy.reportRedaction = .none
    let plain = reportMessages { spy.verify(.post("/me"), called: .once) }
    #expect(plain.first?.contains("Authorization: \(token)") == true)
    for task in spy.pendingTasks { spy.complete(task, with: .status(200)) }
  }

  @Test func aMatchersDescriptionMasksSecretHeadersByDefault() {
    let matcher = RequestMatcher.get("/me").header("X-Api-Key", "k-1234567890")
    #expect(matcher.description == "GET /me header X-Api-Key: k-12… (12 characters, masked)")
    #expect(
      (!RequestMatcher.header("Cookie", "a=bcdefghijk")).description
        == "not (header Cookie: a=bc… (12 characters, masked))")
  }
}
