/// A repository, as the entries of `GET /users/{login}/repos` describe it.
///
/// The JSON keys are GitHub's snake case (`full_name`, `private`); the coding keys map them.
///
/// ```swift
/// let page = try await client.fetchRepositories(of: "octocat")
/// for repository in page.repositories { print(repository.fullName) }
/// ```
public struct Repository: Codable, Equatable, Sendable {
  /// GitHub's numeric identifier for the repository.
  ///
  /// It survives renames and transfers, so it is the key to store.
  public var id: Int
  /// The repository's name, such as `Hello-World`.
  ///
  /// Together with the owner's login it names the repository in URLs:
  /// `client.createIssue(draft, owner: "octocat", repository: repository.name)`.
  public var name: String
  /// The owner and name, such as `octocat/Hello-World`.
  ///
  /// JSON key `full_name`.
  public var fullName: String
  /// Whether only invited people can see the repository.
  ///
  /// JSON key `private`. `GET /users/{login}/repos` lists public repositories only, so it is
  /// `false` on every page ``GitHubClient`` fetches; the field is here for other listings.
  public var isPrivate: Bool

  /// Creates a repository; tests use it to build canned answers.
  ///
  /// ```swift
  /// let hello = Repository(id: 1, name: "Hello-World", fullName: "octocat/Hello-World")
  /// ```
  public init(id: Int, name: String, fullName: String, isPrivate: Bool = false) {
    self.id = id
    self.name = name
    self.fullName = fullName
    self.isPrivate = isPrivate
  }

  enum CodingKeys: String, CodingKey {
    case id
    case name
    case fullName = "full_name"
    case isPrivate = "private"
  }
}
