import Testing

extension Issue {
  /// Everything a recorded issue says: its description and its comments, where the doubles put
  /// their messages.
  var reportedText: String {
    ([String(describing: self)] + comments.map(\.rawValue)).joined(separator: "\n")
  }
}
