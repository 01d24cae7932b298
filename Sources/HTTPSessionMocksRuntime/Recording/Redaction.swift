import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Which secrets a recording replaces with `REDACTED` before it is written: header values,
/// query items, JSON body fields, and literal strings.
///
/// ``default`` covers the usual credentials; extend it, or start from ``none``:
///
/// ```swift
/// let har = try spy.harData(redacting: .default.header("X-Trace").jsonField("ssn"))
/// ```
///
/// It applies to requests and responses alike, and a replaying mock redacts each live request
/// the same way before matching it, so a request that carries a real token matches the recording
/// that carries `REDACTED`. See "Keep secrets out of recordings" in <doc:RecordingAndReplaying>.
public struct Redaction: Sendable {
  /// What replaces a redacted value: `REDACTED`.
  public static let placeholder = "REDACTED"

  /// The headers whose values are redacted.
  private var headers: SecretHeaders
  /// Query item names, lowercased.
  private var queryItems: Set<String>
  private var jsonFields: Set<String>
  /// Literals substituted everywhere, in the order they were added.
  private var literals: [(literal: String, replacement: String)]

  private init(
    headers: SecretHeaders, queryItems: Set<String>, jsonFields: Set<String>,
    literals: [(literal: String, replacement: String)]
  ) {
    self.headers = headers
    self.queryItems = queryItems
    self.jsonFields = jsonFields
    self.literals = literals
  }

  /// Redacts nothing.
  public static var none: Redaction {
    Redaction(headers: .none, queryItems: [], jsonFields: [], literals: [])
  }

  /// Redacts the values of the headers that failure reports mask (``ReportRedaction/default``):
  /// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and every header whose name
  /// contains `token`, `secret`, `password`, `api-key`, `api_key` or `apikey` (`X-Api-Key`,
  /// `X-Auth-Token`, `X-Access-Token`); of the query items `token`, `access_token`,
  /// `refresh_token`, `api_key`, `apikey`, `key`, `password`, `secret`, `client_secret`,
  /// `signature` and `sig`; and of the JSON fields (at any depth) `password`, `token`,
  /// `access_token`, `refresh_token`, `client_secret` and `secret`.
  public static var `default`: Redaction {
    Redaction(
      headers: .usual,
      queryItems: [
        "token", "access_token", "refresh_token", "api_key", "apikey", "key", "password",
        "secret", "client_secret", "signature", "sig",
      ],
      jsonFields: [
        "password", "token", "access_token", "refresh_token", "client_secret", "secret",
      ],
      literals: [])
  }

  /// This redaction, and the values of the header `name` (any case) too.
  public func header(_ name: String) -> Redaction {
    var copy = self
    copy.headers = copy.headers.adding(name)
    return copy
  }

  /// This redaction, and the values of query items named `name` (any case) too.
  public func query(_ name: String) -> Redaction {
    var copy = self
    copy.queryItems.insert(name.lowercased())
    return copy
  }

  /// This redaction, and the values of JSON body fields named `name`, at any depth, too.
  public func jsonField(_ name: String) -> Redaction {
    var copy = self
    copy.jsonFields.insert(name)
    return copy
  }

  /// This redaction, and `literal` replaced with `replacement` wherever it appears in URLs,
  /// header values and bodies (a value your test knows, such as an account number).
  public func replacing(_ literal: String, with replacement: String) -> Redaction {
    var copy = self
    if !literal.isEmpty { copy.literals.append((literal, replacement)) }
    return copy
  }

  /// Whether this redaction changes nothing.
  var isEmpty: Bool {
    headers.isEmpty && queryItems.isEmpty && jsonFields.isEmpty && literals.isEmpty
  }

  // MARK: - Applying

  /// `request` with its secrets redacted: URL, headers and body.
  func redact(_ request: URLRequest) -> URLRequest {
    guard !isEmpty else { return request }
    var copy = request
    if let url = request.url, redacted(url) != url { copy.url = redacted(url) }
    if let fields = request.allHTTPHeaderFields {
      let redacted = redact(headers: fields)
      if redacted != fields {
        for name in fields.keys { copy.setValue(nil, forHTTPHeaderField: name) }
        for (name, value) in redacted { copy.setValue(value, forHTTPHeaderField: name) }
      }
    }
    if let body = request.httpBody {
      let redacted = redact(
        body: body, contentType: request.value(forHTTPHeaderField: "Content-Type"))
      if redacted != body { copy.httpBody = redacted }
    }
    return copy
  }

  /// `url` with its secret query items and literals redacted, or `nil` if the result is no URL.
  func redact(_ url: URL) -> URL? {
    guard !isEmpty else { return url }
    var text = url.absoluteString
    if !queryItems.isEmpty, let queryStart = text.firstIndex(of: "?") {
      let fragmentStart = text[queryStart...].firstIndex(of: "#") ?? text.endIndex
      let query = text[text.index(after: queryStart)..<fragmentStart]
      text.replaceSubrange(
        text.index(after: queryStart)..<fragmentStart, with: redact(formEncoded: Substring(query)))
    }
    if let redacted = URL(string: substituteLiterals(in: text)) { return redacted }
    // A replacement that is not valid in a URL goes in percent-encoded.
    var encoded = text
    for (literal, replacement) in literals {
      let safe = replacement.addingPercentEncoding(withAllowedCharacters: .alphanumerics)
      encoded = encoded.replacing(literal, with: safe ?? Self.placeholder)
    }
    return URL(string: encoded)
  }

  /// `url` redacted; when the result would be no URL, the URL with its query and fragment cut
  /// off, so that a secret never survives.
  func redacted(_ url: URL) -> URL {
    if let result = redact(url) { return result }
    var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
    components?.query = nil
    components?.fragment = nil
    return components?.url.flatMap(redact) ?? URL(fileURLWithPath: "/")
  }

  /// Header values redacted by name, and literals substituted in the rest.
  func redact(headers fields: [String: String]) -> [String: String] {
    guard !isEmpty else { return fields }
    var result: [String: String] = [:]
    for (name, value) in fields {
      result[name] =
        headers.contains(name) ? Self.placeholder : substituteLiterals(in: value)
    }
    return result
  }

  /// A body with its secret JSON fields (or form fields) redacted and literals substituted.
  func redact(body: Data, contentType: String?) -> Data {
    guard !isEmpty, !body.isEmpty else { return body }
    var result = body
    let isForm = contentType?.lowercased().contains("application/x-www-form-urlencoded") == true
    if isForm, !queryItems.isEmpty, let text = String(data: body, encoding: .utf8) {
      result = Data(redact(formEncoded: Substring(text)).utf8)
    } else if !jsonFields.isEmpty, let first = body.first(where: { !Self.isSpace($0) }),
      first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
      let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    {
      var changed = false
      let redacted = redactJSON(object, changed: &changed)
      if changed,
        let data = try? JSONSerialization.data(
          withJSONObject: redacted, options: [.sortedKeys, .fragmentsAllowed])
      {
        result = data
      }
    }
    guard !literals.isEmpty else { return result }
    if let text = String(data: result, encoding: .utf8) {
      return Data(substituteLiterals(in: text).utf8)
    }
    for (literal, replacement) in literals {
      result = Self.replacing(Data(literal.utf8), with: Data(replacement.utf8), in: result)
    }
    return result
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  /// `name=value&...` with the values of secret names replaced; the rest kept byte for byte.
  private func redact(formEncoded text: Substring) -> String {
    text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = URLPattern.decode(Substring(parts[0].replacing("+", with: " ")))
      guard parts.count == 2, queryItems.contains(name.lowercased()) else { return String(pair) }
      return "\(parts[0])=\(Self.placeholder)"
    }.joined(separator: "&")
  }

  private func redactJSON(_ value: Any, changed: inout Bool) -> Any {
    if let object = value as? [String: Any] {
      var result: [String: Any] = [:]
      for (key, member) in object {
        if jsonFields.contains(key) {
          // The whole value goes, even an object or an array: nothing inside it survives.
          result[key] = Self.placeholder
          changed = true
        } else {
          result[key] = redactJSON(member, changed: &changed)
        }
      }
      return result
    }
    if let array = value as? [Any] {
      return array.map { redactJSON($0, changed: &changed) }
    }
    return value
  }

  private func substituteLiterals(in text: String) -> String {
    var result = text
    for (literal, replacement) in literals { result = result.replacing(literal, with: replacement) }
    return result
  }

  private static func replacing(_ target: Data, with replacement: Data, in data: Data) -> Data {
    guard !target.isEmpty else { return data }
    var result = Data()
    var index = data.startIndex
    while let range = data.range(of: target, in: index..<data.endIndex) {
      result += data[index..<range.lowerBound]
      result += replacement
      index = range.upperBound
    }
    result += data[index...]
    return result
  }
}
