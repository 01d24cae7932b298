import Foundation

/// An issue as GitHub returns it after ``GitHubClient/createIssue(_:owner:repository:)``.
///
/// ```swift
/// let issue = try await client.createIssue(NewIssue(title: "Crash on launch"),
///                                          owner: "octocat", repository: "Hello-World")
/// print("#\(issue.number) \(issue.htmlURL)")
/// ```
public struct Issue: Codable, Equatable, Sendable {
  /// The issue's number within its repository, such as `1347`.
  ///
  /// It is what people write as `#1347`, and the last path segment of ``htmlURL``.
  public var number: Int
  /// The issue's title.
  ///
  /// The ``NewIssue/title`` it was created with, unless someone has edited it since.
  public var title: String
  /// `open` or `closed`.
  ///
  /// A new issue is always `open`.
  public var state: String
  /// The issue's page on the web.
  ///
  /// JSON key `html_url`; link people here rather than to the API URL.
  public var htmlURL: URL

  /// Creates an issue; tests use it to build canned answers.
  ///
  /// ```swift
  /// let created = Issue(number: 1, title: "Crash", state: "open",
  ///                     htmlURL: URL(string: "https://github.com/octocat/Hello-World/issues/1")!)
  /// mock.stub(.post("/repos/octocat/Hello-World/issues"), with: .json(created, status: 201))
  /// ```
  public init(number: Int, title: String, state: String, htmlURL: URL) {
    self.number = number
    self.title = title
    self.state = state
    self.htmlURL = htmlURL
  }

  enum CodingKeys: String, CodingKey {
    case number
    case title
    case state
    case htmlURL = "html_url"
  }
}
