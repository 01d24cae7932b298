/// Which header values failure reports mask, so that a secret sent in a test does not reach a
/// CI log.
///
/// Reports (near misses, unmatched requests, failed verifications) print the requests a double
/// saw with their headers. By default (``default``) they mask the values of `Authorization`,
/// `Proxy-Authorization`, `Cookie`, `Set-Cookie` and every header whose name contains `token`,
/// `secret`, `password`, `api-key`, `api_key` or `apikey` (in any case): a masked value shows
/// its first characters (at most 4, and never more than a third of it) and its length, and a
/// matcher that compares such a header says only that the values differ, with both lengths:
///
/// ```text
/// headers: Authorization: Bear… (20 characters, masked)
/// - header Authorization: differs (expected 14 characters, got 20; values masked)
/// ```
///
/// Set it per double; ``none`` prints every value as sent:
///
/// ```swift
/// let mock = URLSessionMock()
/// mock.reportRedaction = .none  // this test's tokens are fake: show them
/// mock.reportRedaction = .default.header("X-Session")  // mask one more header
/// ```
///
/// Only what reports print is masked: the journal (``RecordingSession/requests``), matching,
/// and recordings are unchanged (a recording has its own ``Redaction``).
public struct ReportRedaction: Sendable, Equatable {
  /// Whole header names that are masked, lowercased.
  private var names: Set<String>
  /// Parts of header names that make a header masked, lowercased.
  private var fragments: [String]

  /// Masks `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and headers whose
  /// name contains `token`, `secret`, `password`, `api-key`, `api_key` or `apikey`.
  public static var `default`: ReportRedaction {
    ReportRedaction(
      names: ["authorization", "proxy-authorization", "cookie", "set-cookie"],
      fragments: ["token", "secret", "password", "api-key", "api_key", "apikey"])
  }

  /// Masks nothing: reports print every header as it was sent.
  public static var none: ReportRedaction { ReportRedaction(names: [], fragments: []) }

  /// This redaction, and the values of the header `name` (any case) masked too.
  public func header(_ name: String) -> ReportRedaction {
    var copy = self
    copy.names.insert(name.lowercased())
    return copy
  }

  /// Whether reports mask the value of the header `name`.
  public func masks(_ name: String) -> Bool {
    guard !names.isEmpty || !fragments.isEmpty else { return false }
    let lowered = name.lowercased()
    return names.contains(lowered) || fragments.contains { lowered.contains($0) }
  }

  /// `value` as reports show the value of the header `name`: masked when ``masks(_:)`` says so.
  public func shown(_ value: String, ofHeader name: String) -> String {
    masks(name) ? Self.masked(value) : value
  }

  /// A masked value: a few leading characters, an ellipsis and the length.
  static func masked(_ value: String) -> String {
    let count = value.count
    let shown = value.prefix(min(4, count / 3))
    return "\(shown)… (\(count) character\(count == 1 ? "" : "s"), masked)"
  }
}
