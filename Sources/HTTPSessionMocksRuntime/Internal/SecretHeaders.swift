/// Which header names carry secrets: the one list that recordings (``Redaction``) and failure
/// reports (``ReportRedaction``) start from, so that a header a report masks is never written
/// in clear into a recording.
///
/// A header is secret when its name (in any case) is one of ``names``, or contains one of
/// ``fragments`` (`X-Access-Token`, `X-Client-Secret`, `X-Api-Key`).
struct SecretHeaders: Sendable, Equatable {
  /// Whole header names, lowercased.
  var names: Set<String>
  /// Parts of header names, lowercased.
  var fragments: [String]

  /// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and every header whose
  /// name contains `token`, `secret`, `password`, `api-key`, `api_key` or `apikey`.
  static let usual = SecretHeaders(
    names: ["authorization", "proxy-authorization", "cookie", "set-cookie"],
    fragments: ["token", "secret", "password", "api-key", "api_key", "apikey"])

  /// No header.
  static let none = SecretHeaders(names: [], fragments: [])

  var isEmpty: Bool { names.isEmpty && fragments.isEmpty }

  /// These headers and the header `name` (any case).
  func adding(_ name: String) -> SecretHeaders {
    var copy = self
    copy.names.insert(name.lowercased())
    return copy
  }

  /// Whether the header `name` is secret.
  func contains(_ name: String) -> Bool {
    guard !isEmpty else { return false }
    let lowered = name.lowercased()
    return names.contains(lowered) || fragments.contains { lowered.contains($0) }
  }
}
