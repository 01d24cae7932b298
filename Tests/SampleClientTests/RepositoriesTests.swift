import Foundation
import HTTPSessionMocks
import SampleClient
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `GET /users/{login}/repos`: the page query, the `Link` header, and following it.
@Suite struct RepositoriesTests {
  @Test func firstPageAsksForPageOneWithThePageSize() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat/repos"), with: .json([Repository.helloWorld]))
    let client = makeClient(mock)

    let page = try await client.fetchRepositories(of: "octocat", pageSize: 50)

    #expect(page.repositories == [.helloWorld])
    mock.verify(.get("/users/octocat/repos").query(["page": "1", "per_page": "50"]))
  }

  @Test func decodesGitHubsSnakeCaseKeys() throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/users/octocat/repos"),
      with: .text(
        #"[{"id": 42, "name": "secret", "full_name": "octocat/secret", "private": true}]"#,
        headers: ["Content-Type": "application/json"]))
    let client = makeClient(mock)
    let outcomes = Outcomes<Result<RepositoryPage, GitHubError>>()

    client.fetchRepositories(of: "octocat", completion: outcomes.append)

    #expect(try outcomes.last?.get().repositories == [.secret])
  }

  @Test func theNextLinkBecomesTheNextPageURL() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/users/octocat/repos"),
      with: .json([Repository.helloWorld], headers: linkHeader(next: 2, last: 3)))
    let client = makeClient(mock)

    let page = try await client.fetchRepositories(of: "octocat")

    #expect(
      page.nextPageURL
        == URL(string: "https://api.github.com/user/583231/repos?per_page=2&page=2"))
  }

  @Test func theLastPageHasNoNextPage() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/user/583231/repos?page=3"),
      with: .json([Repository.linguist], headers: linkHeader(next: nil, last: 3)))
    let client = makeClient(mock)
    let last = try #require(
      URL(string: "https://api.github.com/user/583231/repos?per_page=2&page=3"))

    let page = try await client.fetchRepositories(at: last)

    #expect(page == RepositoryPage(repositories: [.linguist], nextPageURL: nil))
  }

  @Test func fetchAllFollowsTheLinksPageByPage() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/users/octocat/repos?page=1"),
      with: .json([Repository.helloWorld, .spoonKnife], headers: linkHeader(next: 2, last: 2)))
    mock.stub(
      .get("/user/583231/repos?page=2"),
      with: .json([Repository.linguist], headers: linkHeader(next: nil, last: 2)))
    let client = makeClient(mock)

    let all = try await client.fetchAllRepositories(of: "octocat", pageSize: 2)

    #expect(all == [.helloWorld, .spoonKnife, .linguist])
    mock.verifyInOrder([
      .get("https://api.github.com/users/octocat/repos?page=1&per_page=2"),
      .get("https://api.github.com/user/583231/repos?page=2&per_page=2"),
    ])
    mock.verify(.any, called: .exactly(2))
  }

  @Test func fetchAllStopsAfterTheMaximumNumberOfPages() async throws {
    // A server that always has one more page.
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat/repos")) { _ in
      .json([Repository.helloWorld], headers: linkHeader(next: 2, last: 99))
    }
    mock.stub(.get("/user/583231/repos")) { request in
      let page =
        URLComponents(url: request.url!, resolvingAgainstBaseURL: false)?.queryItems?
        .first { $0.name == "page" }?.value.flatMap { Int($0) } ?? 0
      return .json([Repository.helloWorld], headers: linkHeader(next: page + 1, last: 99))
    }
    let client = makeClient(mock)

    let all = try await client.fetchAllRepositories(of: "octocat", pageSize: 2, maximumPages: 3)

    #expect(all.count == 3)
    mock.verify(.get("/user/583231/repos"), called: .exactly(2))
    #expect(mock.requests.last?.url?.query == "per_page=2&page=3")
  }

  @Test func aFailingPageFailsTheWholeListing() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/users/octocat/repos"),
      with: .json([Repository.helloWorld], headers: linkHeader(next: 2, last: 2)))
    mock.stub(.get("/user/583231/repos"), with: .status(500))
    let client = makeClient(mock)

    let error = await #expect(throws: GitHubError.self) {
      try await client.fetchAllRepositories(of: "octocat")
    }

    #expect(error?.statusCode == 500)
    #expect(mock.requests.count == 2)
  }
}
