import Foundation
import HTTPSessionMocks
import SampleClient
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A `SpySession` in manual mode holds every request until the test answers it, in any order:
/// the way to test loading states and answers that overtake each other.
@Suite struct OutOfOrderTests {
  @Test func theSecondRequestCanBeAnsweredFirst() throws {
    let spy = SpySession()
    let client = makeClient(spy)
    let arrivals = Outcomes<String>()

    client.fetchUser("octocat") { arrivals.append((try? $0.get())?.login ?? "failed") }
    client.fetchUser("hubot") { arrivals.append((try? $0.get())?.login ?? "failed") }

    // Both requests are in flight, nothing has arrived.
    #expect(spy.pendingTasks.count == 2)
    #expect(arrivals.all.isEmpty)

    let first = spy.pendingTasks[0]
    let second = spy.pendingTasks[1]
    spy.complete(second, with: .json(User.hubot))
    #expect(arrivals.all == ["hubot"])
    #expect(first.state == .running)

    spy.complete(first, with: .json(User.octocat))
    #expect(arrivals.all == ["hubot", "octocat"])
    #expect(spy.pendingTasks.isEmpty)
    spy.verifyInOrder([.get("/users/octocat"), .get("/users/hubot")])
  }

  @Test func concurrentAsyncCallsEachGetTheirOwnAnswer() async throws {
    let spy = SpySession()
    let client = makeClient(spy)

    let octocat = Task { try await client.fetchUser("octocat") }
    let hubot = Task { try await client.fetchUser("hubot") }
    try await spy.waitForRequests(count: 2)

    // The two tasks started in either order: find each request by its URL.
    let pending = spy.pendingTasks
    let forHubot = try #require(pending.first { $0.originalRequest.url?.path == "/users/hubot" })
    let forOctocat = try #require(
      pending.first { $0.originalRequest.url?.path == "/users/octocat" })

    spy.complete(forHubot, with: .json(User.hubot))
    #expect(try await hubot.value == .hubot)
    #expect(spy.pendingTasks.count == 1)  // octocat is still loading

    spy.complete(forOctocat, with: .json(["message": "Server Error"], status: 500))
    let error = await #expect(throws: GitHubError.self) { try await octocat.value }
    #expect(error?.statusCode == 500)
  }

  @Test func aForwardingSpyRecordsWithoutChangingTheAnswer() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/octocat"), with: .json(User.octocat))
    let spy = SpySession(wrapping: mock)
    let client = makeClient(spy, token: "ghp_secret")

    let user = try await client.fetchUser("octocat")

    #expect(user == .octocat)
    spy.verify(.get("/users/octocat").header("Authorization", "Bearer ghp_secret"))
    #expect(spy.requests.map(\.url) == mock.requests.map(\.url))
  }
}
