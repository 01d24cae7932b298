import Foundation

/// One page of a user's repositories, with the link to the next page if there is one.
///
/// GitHub paginates lists: it answers `?page=1&per_page=30` with thirty entries and a `Link`
/// header whose `rel="next"` entry is the URL of the following page. The last page has no
/// `next` link.
///
/// ```swift
/// var page = try await client.fetchRepositories(of: "octocat")
/// while let next = page.nextPageURL {
///   page = try await client.fetchRepositories(at: next)
/// }
/// ```
///
/// ``GitHubClient/fetchAllRepositories(of:pageSize:maximumPages:)`` does that loop for you.
public struct RepositoryPage: Equatable, Sendable {
  /// The repositories on this page, in GitHub's order.
  ///
  /// At most the `pageSize` that was asked for; the last page may hold fewer.
  public var repositories: [Repository]
  /// The URL of the next page (the `Link` header's `rel="next"`), or `nil` on the last page.
  ///
  /// Pass it to ``GitHubClient/fetchRepositories(at:)`` as it is: GitHub's links carry their
  /// own query, and may point at another path (`/user/{id}/repos`).
  public var nextPageURL: URL?

  /// Creates a page.
  ///
  /// ```swift
  /// let last = RepositoryPage(repositories: [hello], nextPageURL: nil)
  /// ```
  public init(repositories: [Repository], nextPageURL: URL?) {
    self.repositories = repositories
    self.nextPageURL = nextPageURL
  }
}
