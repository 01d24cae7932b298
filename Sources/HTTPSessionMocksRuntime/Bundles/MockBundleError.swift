import Foundation

/// Why a bundle could not be read or written: the file, the place in it, and what was expected.
///
/// Readers never crash and never load part of a file: they throw this error instead, naming the
/// file and either a path into the document (for a value that is wrong) or the line and column
/// (for text that is not JSON), with the reason:
///
/// ```text
/// Fixtures/bundle.json: entries[12].response.status: expected a number, got "abc"
/// Mocks/loggedIn/bundle.json: [1].response.code: expected a number, got "abc"
/// Fixtures/session.har:1:48213: not valid JSON: Unexpected end of file (in a string)
/// ```
///
/// Its `localizedDescription` is ``description``.
public struct MockBundleError: Error, Sendable, Equatable, CustomStringConvertible,
  LocalizedError
{
  /// What kind of problem it is.
  public enum Kind: Sendable, Equatable {
    /// The file or folder could not be read.
    case unreadable
    /// The document is not what the format expects.
    case malformed
    /// A body file that an entry names does not exist or cannot be read.
    case missingFile
    /// A body file path leads outside the bundle's folder (`..`, an absolute path, a symbolic
    /// link out); bundles never read outside their folder.
    case fileOutsideBundle
    /// A stub cannot be stored in a file: its matcher or response runs a closure, or its error
    /// is not a `URLError`.
    case unstorable
    /// The operation is not available (yet) for this input.
    case unsupported
  }

  /// What kind of problem it is.
  public let kind: Kind
  /// The file (or `MockBundle` for a bundle built in code) that has the problem.
  public let source: String
  /// Where in the document: a JSON path such as `entries[12].response.status`, or `[1].response`
  /// in a MockingBird bundle; empty for the whole document.
  public let path: String
  /// What was wrong and what was expected.
  public let problem: String
  /// The line of the problem in the file (counted from 1), when it is a place in the text: a
  /// syntax error, or a string that is not text; `nil` otherwise.
  public let line: Int?
  /// The column of the problem on ``line`` (counted from 1, in characters), or `nil`.
  public let column: Int?

  init(
    _ kind: Kind, source: String, path: String = "", line: Int? = nil, column: Int? = nil,
    _ problem: String
  ) {
    self.kind = kind
    self.source = source
    self.path = path
    self.problem = problem
    self.line = line
    self.column = column
  }

  /// `source: path: problem`, or `source:line:column: problem` (with the path after the
  /// column when there is one).
  public var description: String {
    var text = source
    if let line, let column { text += ":\(line):\(column)" }
    return text + ": " + (path.isEmpty ? "" : "\(path): ") + problem
  }

  /// The ``description``, so that `localizedDescription` says what is wrong and where.
  public var errorDescription: String? { description }
}
