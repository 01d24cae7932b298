/// What ``GitHubClient/createIssue(_:owner:repository:)`` sends as the JSON body of
/// `POST /repos/{owner}/{repo}/issues`.
///
/// A `nil` body is left out of the JSON, as GitHub expects.
///
/// ```swift
/// let draft = NewIssue(title: "Crash on launch", body: "Steps: …", labels: ["bug"])
/// // sends {"body":"Steps: …","labels":["bug"],"title":"Crash on launch"}
/// ```
///
/// Tests compare the body that was sent with the same value:
///
/// ```swift
/// mock.verify(.post("/repos/octocat/Hello-World/issues").jsonBody(draft))
/// ```
public struct NewIssue: Codable, Equatable, Sendable {
  /// The issue's title; GitHub requires it.
  ///
  /// GitHub answers `422` to an empty title.
  public var title: String
  /// The issue's text, in Markdown.
  ///
  /// `nil` leaves the key out of the JSON, and the issue has no description.
  public var body: String?
  /// Names of labels to apply; unknown names are created by GitHub.
  ///
  /// Always sent, as `[]` when empty.
  public var labels: [String]

  /// Creates a draft issue.
  ///
  /// ```swift
  /// let draft = NewIssue(title: "Crash on launch", labels: ["bug"])
  /// ```
  public init(title: String, body: String? = nil, labels: [String] = []) {
    self.title = title
    self.body = body
    self.labels = labels
  }
}
