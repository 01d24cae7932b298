import Foundation
import HTTPSessionKit
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The match budget through the injected door: the same request path as the loopback server's.
@Suite struct MatchBudgetTests {
  @Test func aRequestWhosePatternRunsPastTheBudgetFailsWithAReportNamingIt() async throws {
    let mock = URLSessionMock()
    mock.limitMatching(MatchLimits(maxDuration: .milliseconds(10)))
    mock.stub(.get("/search").header("X-Query", .matches("(a*)*b")), with: .text("found"))
    var request = URLRequest(url: URL(string: "https://api.example.com/search")!)
    request.setValue(String(repeating: "a", count: 40), forHTTPHeaderField: "X-Query")
    await expectReport(
      containing: "Matching GET", "stopped: the regular expression /(a*)*b/",
      "was still running after 10 ms"
    ) {
      await #expect(throws: URLError.self) { _ = try await mock.data(for: request) }
    }
    #expect(mock.unmatchedRequests.count == 1)
  }
}
