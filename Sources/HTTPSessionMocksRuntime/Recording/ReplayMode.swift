/// How a replaying mock uses its HAR file and the live session: see
/// ``URLSessionMock/init(replaying:mode:from:redacting:clock:fileID:filePath:line:column:environment:)``.
///
/// The environment variable `HTTPSESSIONKIT_RECORD` overrides the mode without a code change:
/// `none` means ``replay``, `missing` ``recordMissing``, `all` ``record``. When `CI` is set,
/// recording is refused and the mode is ``replay`` whatever the code or the variable says.
public enum ReplayMode: String, Sendable, CaseIterable {
  /// Answers from the file only and never touches the live session; a request the file does
  /// not have is an unmatched request, reported as usual. The file must exist.
  case replay
  /// Answers what the file has; sends every other request to the live session, appends the
  /// exchange to the file (redacted) and replays it from then on. A missing file starts empty.
  case recordMissing
  /// Sends every request to the live session and rewrites the file with what was exchanged:
  /// the first recorded exchange replaces what the file held.
  case record

  /// The value of `HTTPSESSIONKIT_RECORD` that selects this mode.
  var environmentValue: String {
    switch self {
    case .replay: "none"
    case .recordMissing: "missing"
    case .record: "all"
    }
  }
}
