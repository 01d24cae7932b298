// `swift run sample-client`: GitHubClient through scripted scenarios against the doubles of
// HTTPSessionMocks. No network and no waiting: every delay runs on a VirtualClock. Exits 0 when
// every check passes, 1 otherwise; the doubles explain failures on standard error.

import Foundation
import HTTPSessionMocksRuntime
import SampleClient

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

let octocat = User(login: "octocat", id: 583_231)
let hubot = User(login: "hubot", id: 480_938)
let transcript = Transcript()

/// A fresh client, mock and clock for one scenario; `stubs` registers the mock's answers.
func stage(
  token: String? = nil, timeout: Duration? = nil,
  stubs: (URLSessionMock) -> [Stub]
) -> (client: GitHubClient, mock: URLSessionMock, clock: VirtualClock) {
  let clock = VirtualClock()
  let mock = URLSessionMock(clock: clock)
  _ = stubs(mock)
  let client = GitHubClient(token: token, clock: clock, timeout: timeout)
  client.session = TranscriptSession(mock, clock: clock, transcript: transcript)
  return (client, mock, clock)
}

/// What a failed call threw, as the transcript shows it.
func describe(_ error: any Error) -> String {
  (error as? GitHubError).map { "GitHubError: \($0)" } ?? "\(type(of: error)): \(error)"
}

func fetchUserWithCompletionHandler() {
  transcript.scenario("A user, with a completion handler (answered inside resume())")
  let (client, mock, _) = stage { mock in
    [mock.stub(.get("/users/{login}"), with: .json(octocat))]
  }
  let users = Collected<User>()
  client.fetchUser("octocat") { result in
    let user = try? result.get()
    if let user { users.append(user) }
    transcript.result(user.map { "\($0.login), id \($0.id)" } ?? "failed")
  }
  transcript.expect(
    users.all == [octocat], "fetchUser handed back octocat before resume() returned")
  transcript.verify(
    mock, .get("https://api.github.com/users/octocat").header("Accept"),
    as: "GET /users/octocat called once, with an Accept header")
}

/// A `GitHubError`'s case, as the checks name it: `httpStatus(404)`, `undecodable`, ….
func kind(of error: any Error) -> String {
  switch error as? GitHubError {
  case .httpStatus(let code, _)?: return "httpStatus(\(code))"
  case .undecodable?: return "undecodable"
  case .transport(let underlying)?: return "transport(\(format(underlying)))"
  case nil: return "\(type(of: error))"
  }
}

func failuresBecomeTypedErrors() async {
  transcript.scenario("Failures become typed errors")
  let (client, _, _) = stage { mock in
    [
      mock.stub(.get("/users/ghost"), with: .json(["message": "Not Found"], status: 404)),
      mock.stub(.get("/users/mona"), with: .json(["login": "mona"])),
      mock.stub(.get("/users/octocat"), with: .error(URLError(.notConnectedToInternet))),
    ]
  }
  let expected = [
    ("ghost", "httpStatus(404)"), ("mona", "undecodable"),
    ("octocat", "transport(URLError(.notConnectedToInternet))"),
  ]
  for (login, expectedKind) in expected {
    var thrown = "no error"
    do {
      let user = try await client.fetchUser(login)
      transcript.result("unexpectedly succeeded: \(user.login)")
    } catch {
      transcript.result(describe(error))
      thrown = kind(of: error)
    }
    transcript.expect(
      thrown == expectedKind, "GET /users/\(login) throws GitHubError.\(expectedKind)")
  }
}

func followRepositoryPages() async {
  transcript.scenario("Every repository, following the Link header page by page")
  let next = "<https://api.github.com/user/583231/repos?per_page=2&page=2>; rel=\"next\""
  let (client, mock, _) = stage { mock in
    [
      mock.stub(
        .get("/users/{login}/repos"),
        with: .json(
          [
            ["id": 1, "name": "Hello-World", "full_name": "octocat/Hello-World", "private": false],
            ["id": 2, "name": "Spoon-Knife", "full_name": "octocat/Spoon-Knife", "private": false],
          ], headers: ["Link": next])),
      mock.stub(
        .get("/user/{id}/repos"),
        with: .json([
          ["id": 3, "name": "linguist", "full_name": "octocat/linguist", "private": false]
        ])),
    ]
  }
  do {
    let names = try await client.fetchAllRepositories(of: "octocat", pageSize: 2).map(\.name)
    transcript.result(names.joined(separator: ", "))
    transcript.expect(
      names == ["Hello-World", "Spoon-Knife", "linguist"], "3 repositories from 2 pages")
  } catch {
    transcript.result(describe(error))
    transcript.expect(false, "3 repositories from 2 pages")
  }
  transcript.expect(
    mock.verifyInOrder([
      .get("/users/octocat/repos?page=1&per_page=2"), .get("/user/583231/repos?page=2"),
    ]), "page 1, then the Link's page 2, in that order")
}

func retryWithBackOff() async {
  transcript.scenario("Retry after 503 with back-off (1 s, then 2 s of virtual time)")
  let (client, mock, clock) = stage { mock in
    [mock.stub(.get("/users/{login}"), with: [.status(503), .status(503), .json(octocat)])]
  }
  let call = Task { try await client.fetchUser("octocat") }
  do {
    for _ in 1...2 {
      try await clock.waitForSleepers(count: 1)
      guard let wake = clock.nextDeadline else { break }
      transcript.line("          the client sleeps until t=\(format(wake))")
      await clock.advance(to: wake)
    }
    let user = try await call.value
    transcript.result("\(user.login) on the third attempt, at t=\(format(clock.now))")
  } catch {
    transcript.result(describe(error))
  }
  transcript.verify(mock, .get("/users/octocat"), called: .exactly(3))
  transcript.expect(
    clock.now == VirtualClock.Instant(offset: .seconds(3)), "back-off took 3 s of virtual time")
}

func createIssueWithToken() async {
  transcript.scenario("Open an issue with a bearer token")
  let draft = NewIssue(title: "Crash on launch", labels: ["bug"])
  let created = Issue(
    number: 1_347, title: draft.title, state: "open",
    htmlURL: URL(string: "https://github.com/octocat/Hello-World/issues/1347")!)
  let (client, mock, _) = stage(token: "ghp_example") { mock in
    [mock.stub(.post("/repos/{owner}/{repo}/issues"), with: .json(created, status: 201))]
  }
  do {
    let issue = try await client.createIssue(draft, owner: "octocat", repository: "Hello-World")
    transcript.result("issue #\(issue.number) \"\(issue.title)\"")
  } catch {
    transcript.result(describe(error))
  }
  let body = mock.requests.last?.httpBody.flatMap { String(data: $0, encoding: .utf8) }
  transcript.line("     sent body: \(body ?? "(none)")")
  transcript.verify(
    mock,
    .post("/repos/octocat/Hello-World/issues").header("Authorization", "Bearer ghp_example")
      .jsonBody(draft),
    as: "POST /repos/octocat/Hello-World/issues called once, with the token and the JSON body")
}

func slowAnswersAndTimeout() async {
  transcript.scenario("Slow answers against a 10 s timeout")
  let (client, mock, clock) = stage(timeout: .seconds(10)) { mock in
    [
      mock.stub(.get("/users/octocat"), with: .json(octocat).delayed(by: .seconds(2))),
      mock.stub(.get("/users/hubot"), with: .json(hubot).delayed(by: .seconds(30))),
    ]
  }
  for (login, sent, wait) in [("octocat", 1, Duration.seconds(2)), ("hubot", 2, .seconds(10))] {
    let call = Task { try await client.fetchUser(login) }
    do {
      try await mock.waitForRequests(count: sent)
      try await clock.waitForSleepers(count: 1)  // the client's timeout is running
      await clock.advance(by: wait)
      let user = try await call.value
      transcript.result("\(user.login) at t=\(format(clock.now))")
      transcript.expect(login == "octocat", "a 2 s answer arrives at t=2s, within the timeout")
    } catch {
      transcript.result("\(describe(error)) at t=\(format(clock.now))")
      let timedOut: Bool
      if case .transport(let urlError as URLError)? = error as? GitHubError {
        timedOut = urlError.code == .timedOut
      } else {
        timedOut = false
      }
      transcript.expect(login == "hubot" && timedOut, "a 30 s answer times out at t=12s")
    }
  }
  transcript.expect(clock.pendingCount == 0, "the late answer was called off, nothing is pending")
}

func outOfOrderWithSpySession() {
  transcript.scenario("Two requests in flight; the test answers the second first (SpySession)")
  let clock = VirtualClock()
  let spy = SpySession()
  let client = GitHubClient(clock: clock)
  client.session = TranscriptSession(spy, clock: clock, transcript: transcript)
  let arrivals = Collected<String>()
  for login in ["octocat", "hubot"] {
    client.fetchUser(login) { result in
      let name = (try? result.get())?.login ?? "failed"
      arrivals.append(name)
      transcript.result(name)
    }
  }
  let pending = spy.pendingTasks
  transcript.line("     \(pending.count) requests held by the spy")
  if pending.count == 2 {
    spy.complete(pending[1], with: .json(hubot))
    spy.complete(pending[0], with: .json(octocat))
  }
  transcript.expect(arrivals.all == ["hubot", "octocat"], "answers arrived hubot, then octocat")
  transcript.expect(
    spy.verifyInOrder([.get("/users/octocat"), .get("/users/hubot")]),
    "requests were sent octocat, then hubot")
}

transcript.line("sample-client: GitHubClient against HTTPSessionMocks (no network, virtual time)")
transcript.line("Requests go to https://api.github.com; t= is the VirtualClock's time.")
transcript.line("")
fetchUserWithCompletionHandler()
await failuresBecomeTypedErrors()
await followRepositoryPages()
await retryWithBackOff()
await createIssueWithToken()
await slowAnswersAndTimeout()
outOfOrderWithSpySession()
exit(transcript.summary())
