/// Which header values failure reports mask, so that a secret sent in a test does not reach a
/// CI log.
///
/// By default (``default``) reports mask the values of `Authorization`, `Proxy-Authorization`,
/// `Cookie`, `Set-Cookie` and of headers named like `*token*`, `*secret*`, `*password*` or
/// `*api-key*`, showing their first characters and their length. Set it per double; ``none``
/// prints every value as sent:
///
/// ```swift
/// mock.reportRedaction = .default.header("X-Session")  // mask one more header
/// ```
///
/// Only reports change: the journal (``RecordingSession/requests``), matching and recordings do
/// not (a recording has its own ``Redaction``, whose ``Redaction/default`` starts from the same
/// list of secret headers). See "Secrets in reports" in
/// <doc:MatchingAndVerifying>.
public struct ReportRedaction: Sendable, Equatable {
  /// The headers whose values are masked.
  private var headers: SecretHeaders

  /// Masks `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and headers whose
  /// name contains `token`, `secret`, `password`, `api-key`, `api_key` or `apikey`.
  public static var `default`: ReportRedaction {
    ReportRedaction(headers: .usual)
  }

  /// Masks nothing: reports print every header as it was sent.
  public static var none: ReportRedaction { ReportRedaction(headers: .none) }

  /// This redaction, and the values of the header `name` (any case) masked too.
  public func header(_ name: String) -> ReportRedaction {
    var copy = self
    copy.headers = copy.headers.adding(name)
    return copy
  }

  /// Whether reports mask the value of the header `name`.
  public func masks(_ name: String) -> Bool {
    headers.contains(name)
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
