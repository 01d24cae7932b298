import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How a mock's reports speak of the mock and of what to do next.
///
/// A mock in a test speaks of code: a report on standard error starts with the line that made
/// it (`UserTests.swift:12: error:`), each stub is named with the line that registered it, and
/// the advice is `mock.stub(_:with:)` and `mock.unmatchedRequestPolicy`. The `stub-server`
/// command serves files to a command-line user, who has neither those lines nor those
/// properties: its mock speaks as the command, names each stub by its file and entry alone
/// (`bundle.json entry 3 (GET /users/{login})`), and advises what the command line can do. A
/// mock that replays a recording says so when the recording is empty, instead of asking for
/// stubs.
///
/// Package API: the package's command and its replaying mocks choose a voice; every mock a
/// user makes speaks of code.
package struct ReportVoice: Sendable {
  /// Who speaks on standard error in place of the call site: `stub-server: error: ...`;
  /// `nil` for the call site. (A test framework always gets the call site.)
  package var speaker: String?
  /// Whether stubs are named with the line that registered them.
  package var citesStubSites: Bool
  /// What a report says when the mock has no stubs at all, such as `The recording users.har
  /// has no entries.`; `nil` for the advice to add a stub in code.
  package var emptyNote: String?
  /// The sentence that ends the report of a request no stub matched; `nil` for the advice to
  /// fix the request, change a stub or set the mock's unmatched-request policy.
  package var unmatchedAdvice: String?

  /// A voice; the defaults are those of code.
  package init(
    speaker: String? = nil, citesStubSites: Bool = true, emptyNote: String? = nil,
    unmatchedAdvice: String? = nil
  ) {
    self.speaker = speaker
    self.citesStubSites = citesStubSites
    self.emptyNote = emptyNote
    self.unmatchedAdvice = unmatchedAdvice
  }

  /// The voice of a mock made in code.
  package static let code = ReportVoice()

  /// The voice of a mock that replays the recording `name` in a test.
  static func replaying(_ name: String) -> ReportVoice {
    ReportVoice(
      emptyNote:
        "The recording \(name) has no entries. Record them once: run the test with "
        + "HTTPSESSIONKIT_RECORD=missing (or create the mock with mode .recordMissing), or add "
        + "a stub with mock.stub(_:with:).")
  }

  // MARK: - What reports say

  /// How a report names a stub, given its matcher as the report shows it:
  /// `GET /users/{login} (registered at UserTests.swift:12)`, or without the site.
  func name(_ matcher: String, registeredAt site: CallSite) -> String {
    citesStubSites ? "\(matcher) (registered at \(site))" : matcher
  }

  /// The lines a report of `request` gives when the mock has no stubs at all.
  func noStubsNote(for request: URLRequest) -> String {
    if let emptyNote { return emptyNote + "\n" }
    return "The mock has no stubs. Add one with mock.stub(_:with:), for example:\n"
      + "  mock.stub(\(NearMiss.suggestedMatcher(for: request)), with: .status(200))\n"
  }

  /// What a report says when the closest stub names an absolute URL (`origin`, such as
  /// `https://api.example.com`) and the request reached the loopback server at its own
  /// address, so that scheme, host and port differ.
  func originNote(for origin: String) -> String {
    let start =
      speaker == nil
      ? "mock.startServer(origin: URL(string: \"\(origin)\")!)"
      : "--origin \(origin)"
    return "The closest stub names an absolute URL, and requests over loopback arrive at the "
      + "server's own address (http://127.0.0.1:PORT). Start the server with \(start) to "
      + "answer each request as if it had been sent to that origin, or match the path alone.\n"
  }

  /// The line that ends the report of a request no stub matched.
  var unmatchedAdviceLine: String {
    (unmatchedAdvice
      ?? "Fix the request, or add or change a stub. To answer unmatched requests instead of "
      + "failing, set mock.unmatchedRequestPolicy (.respond(with:) or .passThrough(to:)).") + "\n"
  }

  /// The same on one line, for a log: `the mock has no stubs`, or the empty note without its
  /// capital and its period (`the recording users.har has no entries`).
  var noStubsSummary: String {
    guard let emptyNote else { return "the mock has no stubs" }
    var line = emptyNote.replacingOccurrences(of: "\n", with: " ")
    if line.hasSuffix(".") { line.removeLast() }
    return line.prefix(1).lowercased() + line.dropFirst()
  }
}
