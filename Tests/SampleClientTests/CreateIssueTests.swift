import Foundation
import HTTPSessionMocks
import SampleClient
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `POST /repos/{owner}/{repo}/issues`: the method, URL, headers and JSON body that were sent.
@Suite struct CreateIssueTests {
  @Test func postsTheDraftAsJSONWithTheBearerToken() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .post("/repos/{owner}/{repo}/issues"), with: .json(SampleClient.Issue.crash, status: 201))
    let client = makeClient(mock, token: "ghp_secret")

    let issue = try await client.createIssue(.crash, owner: "octocat", repository: "Hello-World")

    #expect(issue == .crash)
    mock.verify(
      .post("https://api.github.com/repos/octocat/Hello-World/issues")
        .header("Authorization", "Bearer ghp_secret")
        .header("Content-Type", "application/json")
        .jsonBody(NewIssue.crash),
      called: .once)
  }

  @Test func theRecordedBodyDecodesBackToTheDraft() async throws {
    let mock = URLSessionMock(json: Issue.crash, status: 201)
    let client = makeClient(mock, token: "ghp_secret")

    _ = try await client.createIssue(.crash, owner: "octocat", repository: "Hello-World")

    let sent = try #require(
      mock.requests(matching: .post("/repos/octocat/Hello-World/issues")).first)
    let body = try #require(sent.httpBody)
    #expect(try JSONDecoder().decode(NewIssue.self, from: body) == .crash)
  }

  @Test func aDraftWithoutBodyLeavesTheKeyOut() throws {
    let mock = URLSessionMock(json: Issue.crash, status: 201)
    let client = makeClient(mock, token: "ghp_secret")
    let outcomes = Outcomes<Result<SampleClient.Issue, GitHubError>>()

    client.createIssue(
      NewIssue(title: "Crash"), owner: "octocat", repository: "Hello-World",
      completion: outcomes.append)

    #expect(try outcomes.last?.get() == .crash)
    mock.verify(
      .post("/repos/octocat/Hello-World/issues").body(Data(#"{"labels":[],"title":"Crash"}"#.utf8)))
  }

  @Test func withoutATokenGitHubAnswers401() async throws {
    let mock = URLSessionMock()
    // The newest matching stub answers: authenticated requests get 201, the rest 401.
    mock.stub(
      .post("/repos/{owner}/{repo}/issues"),
      with: .json(["message": "Requires authentication"], status: 401))
    mock.stub(
      .post("/repos/{owner}/{repo}/issues").header("Authorization"),
      with: .json(SampleClient.Issue.crash, status: 201))
    let client = makeClient(mock)

    let error = await #expect(throws: GitHubError.self) {
      try await client.createIssue(.crash, owner: "octocat", repository: "Hello-World")
    }

    #expect(error?.statusCode == 401)
    #expect(error?.description == "HTTP 401: Requires authentication")
    mock.verify(.post("/repos/octocat/Hello-World/issues") && !.header("Authorization"))
  }

  @Test func a503IsNotRetriedForAPost() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock()
    mock.stub(
      .post("/repos/{owner}/{repo}/issues"),
      with: [.status(503), .json(SampleClient.Issue.crash, status: 201)])
    // Zero back-off: if the client did retry, the retry would happen at once and be counted.
    let client = makeClient(
      mock, token: "ghp_secret", clock: clock,
      retryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: .zero))

    let error = await #expect(throws: GitHubError.self) {
      try await client.createIssue(.crash, owner: "octocat", repository: "Hello-World")
    }

    #expect(error?.statusCode == 503)
    mock.verify(.post("/repos/octocat/Hello-World/issues"), called: .once)
  }
}
