import Testing

/// Reads what a recorded issue says, for `withKnownIssue { } matching: { }`.
enum IssueText {
  /// The issue's comments joined into one string (the double's failure message).
  static func of(_ issue: Issue) -> String {
    issue.comments.map(\.rawValue).joined(separator: "\n")
  }
}
