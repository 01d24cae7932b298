import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The `request` a template reads, as WireMock 2.35.1 builds it: `url`, `path`,
/// `pathSegments`, `query`, `headers`, `cookies`, `body`, `method`, `baseUrl`, `clientIp` and
/// `requestLine` (`baseUrl`, `scheme`, `host`, `port`, `path`, `pathSegments`, `query`,
/// `method`, `url`).
///
/// `baseUrl` is the request URL's `scheme://host[:port]`: through the loopback server that is
/// the server's own address (the server gives the mock `http://HOST:PORT/...`), injected it is
/// where the code under test sent the request.
enum TemplateRequestModel {
  /// The model of `request`; with `fields`, only those members of `request` are made (the
  /// others read as nothing), so a template pays only for what it reads.
  static func context(for request: URLRequest, fields: Set<String>? = nil) -> TemplateValue {
    context(for: request, members: Members(fields))
  }

  /// Which members of `request` a template reads, worked out once from the names it uses.
  struct Members: Sendable {
    var requestLine = true
    var url = true
    var pathSegments = true
    var query = true
    var headers = true
    var cookies = true
    var baseUrl = true
    var body = true
    var bodyAsBase64 = true

    /// The members named in `fields`; all of them when `fields` is `nil`.
    init(_ fields: Set<String>?) {
      guard let fields else { return }
      requestLine = fields.contains("requestLine")
      url = requestLine || fields.contains("url")
      pathSegments = requestLine || fields.contains("pathSegments")
      query = requestLine || fields.contains("query")
      headers = fields.contains("headers")
      cookies = fields.contains("cookies")
      baseUrl = requestLine || fields.contains("baseUrl")
      body = fields.contains("body")
      bodyAsBase64 = fields.contains("bodyAsBase64")
    }
  }

  /// The model of `request`, with only the members in `members` made.
  static func context(for request: URLRequest, members: Members) -> TemplateValue {
    let wantsLine = members.requestLine
    let wantsURL = members.url
    let wantsSegments = members.pathSegments
    let wantsQuery = members.query
    let wantsHeaders = members.headers
    let wantsCookies = members.cookies
    let wantsBase = members.baseUrl
    let wantsBody = members.body
    let url = request.url
    var path = url?.path(percentEncoded: true) ?? ""
    if path.isEmpty { path = "/" }
    let rawQuery = wantsURL || wantsQuery ? url?.query(percentEncoded: true) : nil
    let relative = wantsURL ? rawQuery.map { path + "?" + $0 } ?? path : ""
    let segments: TemplateValue =
      !wantsSegments
      ? .null
      : .array(
        split(path[...], at: UInt8(ascii: "/")).map {
          let segment = String($0)
          return .string(
            RequestFacts.containsEscape(segment)
              ? segment.removingPercentEncoding ?? segment : segment)
        }, json: false)
    var query: [(key: String, value: TemplateValue)] = []
    for pair in split((wantsQuery ? rawQuery ?? "" : "")[...], at: UInt8(ascii: "&")) {
      let parts = split(pair, at: UInt8(ascii: "="), maxSplits: 1, omittingEmpty: false)
      let key = decode(String(parts[0]))
      let value = parts.count > 1 ? decode(String(parts[1])) : ""
      if let index = query.firstIndex(where: { $0.key == key }),
        case .values(let existing) = query[index].value
      {
        query[index].value = .values(existing + [value])
      } else {
        query.append((key, .values([value])))
      }
    }
    let queryValue = TemplateValue.object(query, json: false, caseInsensitive: false)
    let given = wantsHeaders || wantsCookies ? request.allHTTPHeaderFields ?? [:] : [:]
    var headers: [(key: String, value: TemplateValue)] = []
    if wantsHeaders {
      headers = given.sorted { $0.key < $1.key }.map {
        (key: $0.key, value: TemplateValue.values([$0.value]))
      }
      if let host = url?.host, !given.keys.contains(where: { Self.sameName($0, "host") }) {
        headers.append(("Host", .values([url?.port.map { "\(host):\($0)" } ?? host])))
      }
    }
    var cookies: [(key: String, value: TemplateValue)] = []
    if wantsCookies, let cookie = given.first(where: { Self.sameName($0.key, "cookie") })?.value {
      for part in cookie.split(separator: ";") {
        let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let name = pair[0].trimmingCharacters(in: .whitespaces)
        let value = pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : ""
        if let index = cookies.firstIndex(where: { $0.key == name }),
          case .values(let existing) = cookies[index].value
        {
          cookies[index].value = .values(existing + [value])
        } else {
          cookies.append((name, .values([value])))
        }
      }
    }
    var scheme = "http"
    var host = "localhost"
    var port = 80
    var baseUrl = ""
    if wantsBase {
      scheme = url?.scheme?.lowercased() ?? "http"
      host = url?.host ?? "localhost"
      port = url?.port ?? (scheme == "https" ? 443 : 80)
      let hostText = host.contains(":") ? "[\(host)]" : host
      baseUrl = scheme + "://" + hostText + (url?.port.map { ":\($0)" } ?? "")
    }
    // WireMock's method is a `RequestMethod`, not text: it renders as its name, but `eq` with
    // a string is false (measured), as it is for a query parameter's values.
    let method = TemplateValue.values([Self.methodName(request.httpMethod)])
    let body = wantsBody ? String(decoding: request.httpBody ?? Data(), as: UTF8.self) : ""
    let requestLine: TemplateValue =
      !wantsLine
      ? .null
      : .object(
        [
          ("method", method), ("scheme", .string(scheme)), ("host", .string(host)),
          ("port", .integer(Int64(port))), ("path", .string(path)), ("pathSegments", segments),
          ("query", queryValue), ("url", .string(relative)), ("baseUrl", .string(baseUrl)),
        ], json: false, caseInsensitive: false)
    let model = TemplateValue.object(
      [
        ("url", .string(relative)), ("path", .string(path)), ("pathSegments", segments),
        ("query", queryValue),
        ("headers", .object(headers, json: false, caseInsensitive: true)),
        ("cookies", .object(cookies, json: false, caseInsensitive: false)),
        ("body", .string(body)),
        (
          "bodyAsBase64",
          .string(members.bodyAsBase64 ? (request.httpBody ?? Data()).base64EncodedString() : "")
        ),
        ("method", method), ("baseUrl", .string(baseUrl)),
        ("clientIp", .string("127.0.0.1")), ("requestLine", requestLine),
      ], json: false, caseInsensitive: false)
    return .object([("request", model)], json: false, caseInsensitive: false)
  }

  /// Whether the header name `name` is `lowercase` (ASCII letters) in any case, as
  /// `caseInsensitiveCompare` says; plain ASCII names skip Foundation's comparison.
  private static func sameName(_ name: String, _ lowercase: String) -> Bool {
    guard name.utf8.allSatisfy({ $0 < 0x80 }) else {
      return name.caseInsensitiveCompare(lowercase) == .orderedSame
    }
    guard name.utf8.count == lowercase.utf8.count else { return false }
    return zip(name.utf8, lowercase.utf8).allSatisfy { byte, expected in
      (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == expected
    }
  }

  /// `text` split at the ASCII `separator` as `split(separator:)` splits it: ASCII text (a
  /// percent-encoded path or query) by its bytes, each of which is a character.
  static func split(
    _ text: Substring, at separator: UInt8, maxSplits: Int = .max, omittingEmpty: Bool = true
  ) -> [Substring] {
    let utf8 = text.utf8
    guard utf8.allSatisfy({ $0 < 0x80 }) else {
      return text.split(
        separator: Character(Unicode.Scalar(separator)), maxSplits: maxSplits,
        omittingEmptySubsequences: omittingEmpty)
    }
    var parts: [Substring] = []
    var start = utf8.startIndex
    var index = start
    while index != utf8.endIndex {
      if utf8[index] == separator, parts.count < maxSplits {
        if !omittingEmpty || start != index { parts.append(text[start..<index]) }
        start = utf8.index(after: index)
      }
      index = utf8.index(after: index)
    }
    if !omittingEmpty || start != utf8.endIndex { parts.append(text[start..<utf8.endIndex]) }
    return parts
  }

  /// The request's method in capitals (`GET` when it has none).
  private static func methodName(_ method: String?) -> String {
    guard let method else { return "GET" }
    if method.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) { return method }
    return method.uppercased()
  }

  /// A query component decoded as WireMock decodes it: `%XX` escapes and `+` as a space.
  private static func decode(_ text: String) -> String {
    TemplateRenderer.formDecode(text)
  }
}
