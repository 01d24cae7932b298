/// Why a HAR file could not be read, or a bundle or recording could not be written as one: the
/// file, where in it, and what was expected.
///
/// ```text
/// session.har: log.entries[12].response.status: expected a number, got "abc"
/// ```
public struct HARError: Error, Sendable, CustomStringConvertible {
  /// The file read (its name or path as given), or what was being written.
  public let source: String
  /// Where in the document: a JSON path such as `log.entries[12].response.status`, or the
  /// bundle entry that could not be written.
  public let path: String
  /// What was expected and what was found.
  public let reason: String

  init(source: String, path: String, reason: String) {
    self.source = source
    self.path = path
    self.reason = reason
  }

  /// `source: path: reason`.
  public var description: String {
    path.isEmpty ? "\(source): \(reason)" : "\(source): \(path): \(reason)"
  }
}
