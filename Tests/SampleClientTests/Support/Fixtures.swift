import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import SampleClient

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension User {
  static let octocat = User(login: "octocat", id: 583_231)
  static let hubot = User(login: "hubot", id: 480_938)
}

extension Repository {
  static let helloWorld = Repository(
    id: 1_296_269, name: "Hello-World", fullName: "octocat/Hello-World")
  static let spoonKnife = Repository(
    id: 1_300_192, name: "Spoon-Knife", fullName: "octocat/Spoon-Knife")
  static let linguist = Repository(id: 1_725_199, name: "linguist", fullName: "octocat/linguist")
  static let secret = Repository(
    id: 42, name: "secret", fullName: "octocat/secret", isPrivate: true)
}

extension Issue {
  static let crash = Issue(
    number: 1_347, title: "Crash on launch", state: "open",
    htmlURL: URL(string: "https://github.com/octocat/Hello-World/issues/1347")!)
}

extension NewIssue {
  static let crash = NewIssue(
    title: "Crash on launch", body: "Open the app; it quits.", labels: ["bug"])
}

/// A client wired to `session`, as a test builds one.
func makeClient(
  _ session: any HTTPSession, token: String? = nil, clock: any Clock<Duration> = VirtualClock(),
  retryPolicy: RetryPolicy = .standard, timeout: Duration? = nil
) -> GitHubClient {
  let client = GitHubClient(token: token, clock: clock, retryPolicy: retryPolicy, timeout: timeout)
  client.session = session
  return client
}

/// The `Link` header GitHub sends with a page of a user's repositories.
func linkHeader(next: Int?, last: Int) -> [String: String] {
  let base = "https://api.github.com/user/583231/repos?per_page=2&page="
  var links: [String] = []
  if let next { links.append("<\(base)\(next)>; rel=\"next\"") }
  links.append("<\(base)\(last)>; rel=\"last\"")
  return ["Link": links.joined(separator: ", ")]
}

/// The `URLError` code inside a `GitHubError.transport`, if that is what `error` is.
func transportCode(_ error: (any Error)?) -> URLError.Code? {
  guard case .transport(let underlying as URLError)? = error as? GitHubError else { return nil }
  return underlying.code
}
