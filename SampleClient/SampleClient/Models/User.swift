/// A GitHub account, as `GET /users/{login}` returns it.
///
/// Only the fields the sample needs are decoded; GitHub sends many more, and `JSONDecoder`
/// ignores them.
///
/// ```swift
/// let user = try await client.fetchUser("octocat")
/// print(user.login, user.id)  // octocat 583231
/// ```
public struct User: Codable, Equatable, Sendable {
  /// The account's handle, such as `octocat`.
  ///
  /// It is the `{login}` of every user URL: `client.fetchRepositories(of: user.login)`.
  public var login: String
  /// GitHub's numeric identifier for the account.
  ///
  /// Unlike the login, it never changes; GitHub's pagination links use it
  /// (`/user/583231/repos?page=2`).
  public var id: Int

  /// Creates a user; tests use it to build canned answers.
  ///
  /// ```swift
  /// mock.stub(.get("/users/octocat"), with: .json(User(login: "octocat", id: 583231)))
  /// ```
  public init(login: String, id: Int) {
    self.login = login
    self.id = id
  }
}
