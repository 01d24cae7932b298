import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A small client for GitHub's REST API: users, their repositories page by page, and new
/// issues.
///
/// It is written the way most API clients are, with one seam for tests: the ``session``
/// property is `URLSession.shared` in production, and a test assigns a double before the first
/// call.
///
/// ```swift
/// let client = GitHubClient(token: "ghp_…")
/// let user = try await client.fetchUser("octocat")
/// let repositories = try await client.fetchAllRepositories(of: user.login)
/// ```
///
/// Every call comes in two shapes: a completion-handler method that returns its task (so the
/// caller can cancel it), and an async method. The async methods also retry a `GET` answered
/// with `503` according to ``retryPolicy``, sleeping on ``clock``, and give up after
/// ``timeout`` on that same clock. Completion-handler methods make a single attempt.
///
/// In a test (module `HTTPSessionMocks`):
///
/// ```swift
/// let mock = URLSessionMock()
/// mock.stub(.get("/users/octocat"), with: .json(User(login: "octocat", id: 1)))
/// let client = GitHubClient()
/// client.session = mock
/// client.fetchUser("octocat") { result in … }  // runs inside resume(), before this returns
/// mock.verify(.get("/users/octocat").header("Accept", "application/vnd.github+json"))
/// ```
///
/// > Important: Assign ``session`` before the client makes its first request and before you
/// > share the client between tasks; the client reads it from whichever thread calls it.
public final class GitHubClient: @unchecked Sendable {
  // @unchecked Sendable: every stored property is a `let` except `session`, which is assigned
  // once, before the first request (the seam tests use), and only read after that.

  /// The session every request goes through.
  ///
  /// `URLSession.shared` until you assign another; tests assign a `URLSessionMock` or a
  /// `SpySession`.
  ///
  /// ```swift
  /// client.session = URLSessionMock(json: User(login: "octocat", id: 1))
  /// ```
  public lazy var session: any HTTPSession = URLSession.shared

  /// The API's root, `https://api.github.com` unless you point the client elsewhere
  /// (GitHub Enterprise, a local server).
  ///
  /// ```swift
  /// let client = GitHubClient(baseURL: URL(string: "https://github.example.com/api/v3")!)
  /// ```
  public let baseURL: URL

  /// The personal access token sent as `Authorization: Bearer <token>`, or `nil` to call
  /// anonymously.
  ///
  /// Reading public data works without one; ``createIssue(_:owner:repository:)`` needs one, and
  /// GitHub answers `401` without it.
  public let token: String?

  /// The clock that retry back-offs and ``timeout`` wait on.
  ///
  /// `ContinuousClock` in production; a test passes a `VirtualClock` so that waiting takes no
  /// real time.
  ///
  /// ```swift
  /// let clock = VirtualClock()
  /// let client = GitHubClient(clock: clock)
  /// ```
  public let clock: any Clock<Duration>

  /// How the async methods retry a `GET` answered with `503`.
  ///
  /// ```swift
  /// let client = GitHubClient(retryPolicy: .never)
  /// ```
  public let retryPolicy: RetryPolicy

  /// How long one attempt of an async call may take on ``clock`` before it fails with
  /// `URLError(.timedOut)`; `nil` leaves timing out to the session.
  ///
  /// ```swift
  /// let client = GitHubClient(clock: clock, timeout: .seconds(10))
  /// ```
  public let timeout: Duration?

  /// Creates a client.
  ///
  /// - Parameters:
  ///   - baseURL: The API's root.
  ///   - token: A personal access token, or `nil` to call anonymously.
  ///   - clock: What back-offs and timeouts wait on.
  ///   - retryPolicy: How a `503` on a `GET` is retried.
  ///   - timeout: How long one attempt of an async call may take, or `nil` for no limit.
  ///
  /// ```swift
  /// let client = GitHubClient(token: ProcessInfo.processInfo.environment["GITHUB_TOKEN"])
  /// ```
  public init(
    baseURL: URL = URL(string: "https://api.github.com")!, token: String? = nil,
    clock: any Clock<Duration> = ContinuousClock(), retryPolicy: RetryPolicy = .standard,
    timeout: Duration? = nil
  ) {
    self.baseURL = baseURL
    self.token = token
    self.clock = clock
    self.retryPolicy = retryPolicy
    self.timeout = timeout
  }

  // MARK: - Users

  /// Fetches a user with `GET /users/{login}` and calls `completion` with it.
  ///
  /// Makes a single attempt. Cancelling the returned task completes with
  /// ``GitHubError/transport(_:)`` carrying `URLError(.cancelled)`.
  ///
  /// ```swift
  /// client.fetchUser("octocat") { result in
  ///   if case .success(let user) = result { print(user.id) }
  /// }
  /// ```
  @discardableResult
  public func fetchUser(
    _ login: String, completion: @escaping @Sendable (Result<User, GitHubError>) -> Void
  ) -> any HTTPDataTask {
    send(makeRequest("GET", path: "/users/\(login)")) { result in
      completion(result.flatMap { $0.decode(User.self) })
    }
  }

  /// Fetches a user with `GET /users/{login}`.
  ///
  /// Throws ``GitHubError``, or `CancellationError` if the calling task is cancelled.
  ///
  /// ```swift
  /// let user = try await client.fetchUser("octocat")
  /// ```
  public func fetchUser(_ login: String) async throws -> User {
    try await send(makeRequest("GET", path: "/users/\(login)")).decode(User.self).get()
  }

  // MARK: - Repositories

  /// Fetches one page of a user's repositories with
  /// `GET /users/{login}/repos?page=…&per_page=…` and calls `completion` with it.
  ///
  /// ```swift
  /// client.fetchRepositories(of: "octocat", page: 2) { result in … }
  /// ```
  @discardableResult
  public func fetchRepositories(
    of login: String, page: Int = 1, pageSize: Int = 30,
    completion: @escaping @Sendable (Result<RepositoryPage, GitHubError>) -> Void
  ) -> any HTTPDataTask {
    send(repositoriesRequest(login, page: page, pageSize: pageSize)) { result in
      completion(result.flatMap(Self.repositoryPage))
    }
  }

  /// Fetches one page of a user's repositories with
  /// `GET /users/{login}/repos?page=…&per_page=…`.
  ///
  /// ```swift
  /// let first = try await client.fetchRepositories(of: "octocat")
  /// if let next = first.nextPageURL { … }
  /// ```
  public func fetchRepositories(of login: String, page: Int = 1, pageSize: Int = 30)
    async throws -> RepositoryPage
  {
    try await Self.repositoryPage(send(repositoriesRequest(login, page: page, pageSize: pageSize)))
      .get()
  }

  /// Fetches the page of repositories at `url`, a ``RepositoryPage/nextPageURL``.
  ///
  /// ```swift
  /// let second = try await client.fetchRepositories(at: first.nextPageURL!)
  /// ```
  public func fetchRepositories(at url: URL) async throws -> RepositoryPage {
    try await Self.repositoryPage(send(makeRequest("GET", url: url))).get()
  }

  /// Fetches every repository of a user, following the `Link` header from page to page.
  ///
  /// Stops after `maximumPages` pages even if GitHub offers more, so that a server that keeps
  /// linking to itself cannot keep the client busy for ever.
  ///
  /// ```swift
  /// let all = try await client.fetchAllRepositories(of: "octocat")
  /// ```
  public func fetchAllRepositories(
    of login: String, pageSize: Int = 100, maximumPages: Int = 10
  ) async throws -> [Repository] {
    var page = try await fetchRepositories(of: login, page: 1, pageSize: pageSize)
    var repositories = page.repositories
    var fetched = 1
    while let next = page.nextPageURL, fetched < maximumPages {
      page = try await fetchRepositories(at: next)
      repositories += page.repositories
      fetched += 1
    }
    return repositories
  }

  // MARK: - Issues

  /// Opens an issue with `POST /repos/{owner}/{repo}/issues` and calls `completion` with the
  /// issue GitHub created (status `201`).
  ///
  /// Sends the ``token`` as a bearer token and the draft as JSON. Never retried.
  ///
  /// ```swift
  /// client.createIssue(NewIssue(title: "Crash"), owner: "octocat", repository: "Hello-World") {
  ///   result in …
  /// }
  /// ```
  @discardableResult
  public func createIssue(
    _ issue: NewIssue, owner: String, repository: String,
    completion: @escaping @Sendable (Result<Issue, GitHubError>) -> Void
  ) -> any HTTPDataTask {
    send(issueRequest(issue, owner: owner, repository: repository)) { result in
      completion(result.flatMap { $0.decode(Issue.self) })
    }
  }

  /// Opens an issue with `POST /repos/{owner}/{repo}/issues` and returns the issue GitHub
  /// created (status `201`).
  ///
  /// Sends the ``token`` as a bearer token and the draft as JSON. A `503` is not retried:
  /// sending the same issue twice is worse than failing.
  ///
  /// ```swift
  /// let issue = try await client.createIssue(
  ///   NewIssue(title: "Crash on launch", labels: ["bug"]), owner: "octocat",
  ///   repository: "Hello-World")
  /// ```
  public func createIssue(_ issue: NewIssue, owner: String, repository: String) async throws
    -> Issue
  {
    try await send(issueRequest(issue, owner: owner, repository: repository)).decode(Issue.self)
      .get()
  }

  // MARK: - Requests

  private func repositoriesRequest(_ login: String, page: Int, pageSize: Int) -> URLRequest {
    makeRequest(
      "GET", path: "/users/\(login)/repos",
      query: [
        URLQueryItem(name: "page", value: String(page)),
        URLQueryItem(name: "per_page", value: String(pageSize)),
      ])
  }

  private func issueRequest(_ issue: NewIssue, owner: String, repository: String) -> URLRequest {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // Encoding a struct of strings cannot fail.
    let body = try! encoder.encode(issue)
    return makeRequest("POST", path: "/repos/\(owner)/\(repository)/issues", body: body)
  }

  private func makeRequest(
    _ method: String, path: String, query: [URLQueryItem] = [], body: Data? = nil
  ) -> URLRequest {
    var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
    let basePath =
      components.path.hasSuffix("/") ? components.path.dropLast() : components.path[...]
    components.path = basePath + path
    if !query.isEmpty { components.queryItems = query }
    return makeRequest(method, url: components.url!, body: body)
  }

  private func makeRequest(_ method: String, url: URL, body: Data? = nil) -> URLRequest {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.setValue("application/vnd.github+json", forHTTPHeaderField: "Accept")
    request.setValue("2022-11-28", forHTTPHeaderField: "X-GitHub-Api-Version")
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if let body {
      request.httpBody = body
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    return request
  }

  private static func repositoryPage(_ answer: Answer) -> Result<RepositoryPage, GitHubError> {
    answer.decode([Repository].self).map {
      RepositoryPage(repositories: $0, nextPageURL: answer.nextPageURL)
    }
  }

  // MARK: - Sending

  /// One attempt, for the completion-handler methods.
  private func send(
    _ request: URLRequest,
    completion: @escaping @Sendable (Result<Answer, GitHubError>) -> Void
  ) -> any HTTPDataTask {
    let task = session.dataTask(with: request) { data, response, error in
      completion(Answer.received(data, response, error).flatMap { $0.validated() })
    }
    task.resume()
    return task
  }

  /// Attempts until an answer is not a retryable `503`, for the async methods.
  private func send(_ request: URLRequest) async throws -> Answer {
    var attempt = 1
    while true {
      let answer = try await transfer(request)
      let retryable = answer.response.statusCode == 503 && request.httpMethod == "GET"
      guard retryable, attempt < retryPolicy.maximumAttempts else {
        return try answer.validated().get()
      }
      try await clock.sleep(
        for: retryPolicy.delay(afterAttempt: attempt, retryAfter: answer.retryAfter))
      attempt += 1
    }
  }

  /// One attempt within ``timeout``: an HTTP answer of any status, or a transport error.
  private func transfer(_ request: URLRequest) async throws -> Answer {
    let session = session
    let clock = clock
    do {
      let (data, response) = try await withTimeout(timeout, on: clock, for: request) {
        try await session.data(for: request)
      }
      return try Answer.received(data, response, nil).get()
    } catch let error as GitHubError {
      throw error
    } catch {
      if Task.isCancelled { throw CancellationError() }
      throw GitHubError.transport(error)
    }
  }
}

/// Runs `operation`, or throws `URLError(.timedOut)` if `timeout` passes first on `clock`.
private func withTimeout(
  _ timeout: Duration?, on clock: any Clock<Duration>, for request: URLRequest,
  _ operation: @escaping @Sendable () async throws -> (Data, URLResponse)
) async throws -> (Data, URLResponse) {
  guard let timeout else { return try await operation() }
  return try await withThrowingTaskGroup(of: (Data, URLResponse).self) { group in
    group.addTask(operation: operation)
    group.addTask {
      try await clock.sleep(for: timeout)
      var info: [String: Any] = [NSLocalizedDescriptionKey: "The request timed out."]
      info[NSURLErrorFailingURLErrorKey] = request.url
      throw URLError(.timedOut, userInfo: info)
    }
    defer { group.cancelAll() }
    // The first child to finish wins: the answer, the transport error, or the timeout.
    return try await group.next()!
  }
}
