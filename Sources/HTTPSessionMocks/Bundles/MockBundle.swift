import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An ordered list of declarative stubs that can be written to files, read back, and handed to
/// a mock.
///
/// ```swift
/// var bundle = MockBundle()
/// bundle.stub(.get("/users/{login}"), with: .json(user))
/// let mock = URLSessionMock(bundle: bundle)
/// ```
public struct MockBundle: Sendable, Equatable {
  /// One declarative stub: what it matches, what it answers, and its limits.
  struct Entry: Sendable {
    /// What the entry matches.
    var matcher: RequestMatcher
    /// What it answers, in order; the last one repeats.
    var responses: [StubResponse]
    /// How many times it may answer; `nil` for no limit.
    var times: Int?
    /// The scenario state it answers in, if any.
    var whenState: String?
    /// The scenario state it moves to when it answers, if any.
    var willSetState: String?
    /// Where it came from, for reports: `bundle.json entry 3 (GET ://httpbin.org/ip)`, or the
    /// call site of `MockBundle.stub`.
    var origin: String
  }

  /// The entries, in file order.
  var entries: [Entry]
  /// Whether the first matching entry answers (MockingBird's rule) rather than the last (the
  /// rule of stubs written in code, of our format and of HAR files).
  var firstMatchWins: Bool

  /// An empty bundle.
  public init() {
    self.init(entries: [], firstMatchWins: false)
  }

  init(entries: [Entry], firstMatchWins: Bool) {
    self.entries = entries
    self.firstMatchWins = firstMatchWins
  }

  /// Whether two bundles hold the same entries in the same order.
  public static func == (lhs: MockBundle, rhs: MockBundle) -> Bool {
    // Placeholder until matchers and responses compare structurally.
    lhs.entries.count == rhs.entries.count && lhs.firstMatchWins == rhs.firstMatchWins
  }

  /// Adds a stub that answers requests `matcher` accepts with `response`.
  public mutating func stub(
    _ matcher: RequestMatcher, with response: StubResponse, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    stub(
      matcher, with: [response], fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Adds a stub that answers requests `matcher` accepts with `responses` in turn; the last
  /// one repeats.
  public mutating func stub(
    _ matcher: RequestMatcher, with responses: [StubResponse], fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    entries.append(Entry(matcher: matcher, responses: responses, origin: "\(site)"))
  }
}
