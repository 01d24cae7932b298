import Foundation
import HTTPSessionMocks
import SampleClient
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The same doubles in XCTest: failures from `verify` and `waitFor…` are reported with
/// `XCTFail` at the calling line.
final class GitHubClientXCTests: XCTestCase {
  func testFetchUserDecodesCannedJSON() throws {
    let client = GitHubClient()
    client.session = URLSessionMock(jsonDict: ["login": "octocat", "id": 583_231])!
    let outcomes = Outcomes<Result<User, GitHubError>>()

    client.fetchUser("octocat", completion: outcomes.append)

    XCTAssertEqual(outcomes.count, 1)
    XCTAssertEqual(try outcomes.last?.get(), User(login: "octocat", id: 583_231))
  }

  func testNotFoundIsAnHTTPStatusError() async {
    let mock = URLSessionMock()
    mock.stub(.get("/users/ghost"), with: .json(["message": "Not Found"], status: 404))
    let client = GitHubClient()
    client.session = mock

    do {
      _ = try await client.fetchUser("ghost")
      XCTFail("Expected GitHubError.httpStatus(404)")
    } catch let error as GitHubError {
      XCTAssertEqual(error.statusCode, 404)
    } catch {
      XCTFail("Unexpected error \(error)")
    }
  }

  func testCreateIssueSendsTokenAndJSONBody() async throws {
    let mock = URLSessionMock(json: SampleClient.Issue.crash, status: 201)
    let client = GitHubClient(token: "ghp_secret")
    client.session = mock

    let issue = try await client.createIssue(.crash, owner: "octocat", repository: "Hello-World")

    XCTAssertEqual(issue.number, 1_347)
    // verify reports its own failure with XCTFail at this line; wrapping it in XCTAssertTrue
    // would report the same problem twice.
    mock.verify(
      .post("/repos/octocat/Hello-World/issues")
        .header("Authorization", "Bearer ghp_secret")
        .jsonBody(NewIssue.crash))
  }

  func testRetryBacksOffOnVirtualTime() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: [.status(503), .json(User.octocat)])
    let client = GitHubClient(clock: clock)
    client.session = mock

    let call = Task { try await client.fetchUser("octocat") }
    try await clock.waitForSleepers(count: 1)
    XCTAssertEqual(mock.requests.count, 1)
    await clock.advance(by: .seconds(1))

    let user = try await call.value
    XCTAssertEqual(user, .octocat)
    XCTAssertEqual(mock.requests.count, 2)
    XCTAssertEqual(clock.now, VirtualClock.Instant(offset: .seconds(1)))
  }
}
