import Foundation
import HTTPSessionMocks
import SampleClient
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `GET /users/{login}`: canned JSON, what was sent, and every way it can fail.
@Suite struct FetchUserTests {
  @Test func completionHandlerRunsInsideResumeWithTheCannedUser() throws {
    // DHURLSessionStub's form: every request gets this JSON.
    let client = makeClient(URLSessionMock(jsonDict: ["login": "octocat", "id": 583_231])!)
    let outcomes = Outcomes<Result<User, GitHubError>>()

    client.fetchUser("octocat", completion: outcomes.append)

    // No waiting: the mock answered synchronously inside resume().
    #expect(outcomes.count == 1)
    #expect(try outcomes.last?.get() == .octocat)
  }

  @Test func asyncFetchDecodesTheStubbedUser() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}")) { _, parameters in
      .json(User(login: parameters["login"] ?? "", id: 7))
    }
    let client = makeClient(mock)

    let user = try await client.fetchUser("hubot")

    #expect(user == User(login: "hubot", id: 7))
  }

  @Test func sendsAGETWithGitHubsHeadersAndNoToken() async throws {
    let mock = URLSessionMock(json: User.octocat)
    let client = makeClient(mock)

    _ = try await client.fetchUser("octocat")

    mock.verify(
      .get("https://api.github.com/users/octocat")
        .header("Accept", "application/vnd.github+json")
        .header("X-GitHub-Api-Version", "2022-11-28"),
      called: .once)
    mock.verify(.header("Authorization"), called: .never)
    let sent = try #require(mock.requests.first)
    #expect(sent.httpBody == nil)
  }

  @Test func sendsTheTokenAsABearerToken() async throws {
    let mock = URLSessionMock(json: User.octocat)
    let client = makeClient(mock, token: "ghp_secret")

    _ = try await client.fetchUser("octocat")

    mock.verify(.get("/users/octocat").header("Authorization", "Bearer ghp_secret"))
  }

  @Test func notFoundCarriesTheStatusAndGitHubsMessage() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/ghost"), with: .json(["message": "Not Found"], status: 404))
    let client = makeClient(mock)

    let error = await #expect(throws: GitHubError.self) { try await client.fetchUser("ghost") }

    #expect(error?.statusCode == 404)
    #expect(error?.description == "HTTP 404: Not Found")
  }

  @Test(arguments: [400, 401, 403, 422, 500, 502, 503])
  func failureStatusesBecomeHTTPStatusErrors(status: Int) throws {
    let client = makeClient(URLSessionMock(status: status))
    let outcomes = Outcomes<Result<User, GitHubError>>()

    // The completion-handler form makes one attempt, so even 503 fails at once.
    client.fetchUser("octocat", completion: outcomes.append)

    let error = try #require(outcomes.last?.failure)
    #expect(error.statusCode == status)
  }

  @Test func successWithTheWrongShapeIsUndecodable() async throws {
    // GitHub changed its mind about `id`: the status is fine, the body is not a User.
    let client = makeClient(URLSessionMock(jsonDict: ["login": "octocat", "id": "583231"])!)

    let error = await #expect(throws: GitHubError.self) { try await client.fetchUser("octocat") }

    guard case .undecodable(.typeMismatch(_, let context))? = error else {
      Issue.record("Expected a type mismatch, got \(String(describing: error))")
      return
    }
    #expect(context.codingPath.map(\.stringValue) == ["id"])
  }

  @Test func bodyThatIsNotJSONIsUndecodable() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: .text("<html>Unicorn!</html>"))
    let client = makeClient(mock)

    let error = await #expect(throws: GitHubError.self) { try await client.fetchUser("octocat") }

    guard case .undecodable(.dataCorrupted)? = error else {
      Issue.record("Expected corrupted data, got \(String(describing: error))")
      return
    }
  }

  @Test func transportErrorsAreWrapped() async throws {
    let client = makeClient(URLSessionMock(error: URLError(.notConnectedToInternet)))

    let error = await #expect(throws: GitHubError.self) { try await client.fetchUser("octocat") }

    #expect(transportCode(error) == .notConnectedToInternet)
    #expect(error?.statusCode == nil)
  }

  @Test func aResponseThatIsNotHTTPIsABadServerResponse() async throws {
    let url = URL(string: "https://api.github.com/users/octocat")!
    let notHTTP = URLResponse(
      url: url, mimeType: "application/json", expectedContentLength: 2, textEncodingName: nil)
    let client = makeClient(URLSessionMock(data: Data("{}".utf8), response: notHTTP, error: nil))

    let error = await #expect(throws: GitHubError.self) { try await client.fetchUser("octocat") }

    #expect(transportCode(error) == .badServerResponse)
  }

  @Test func aRequestNoStubMatchesFailsTheTestAndTheCall() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: .json(User.octocat))
    let client = makeClient(mock)

    // A typo in the code under test: the mock reports it as a test failure with the closest
    // stub, and the client sees a transport error, never a made-up success.
    await withKnownIssue {
      let error = await #expect(throws: GitHubError.self) {
        try await client.fetchUser("octocat ")
      }
      #expect(transportCode(error) == .resourceUnavailable)
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("No stub matches GET") }
    }
    #expect(mock.unmatchedRequests.count == 1)
  }
}
