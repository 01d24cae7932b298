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
    func wants(_ name: String) -> Bool { fields?.contains(name) ?? true }
    let url = request.url
    var path = url?.path(percentEncoded: true) ?? ""
    if path.isEmpty { path = "/" }
    let rawQuery = url?.query(percentEncoded: true)
    let relative = rawQuery.map { path + "?" + $0 } ?? path
    let segments: TemplateValue = .array(
      path.split(separator: "/").map {
        let segment = String($0)
        return .string(
          RequestFacts.containsEscape(segment)
            ? segment.removingPercentEncoding ?? segment : segment)
      }, json: false)
    var query: [(key: String, value: TemplateValue)] = []
    let needsQuery = wants("query") || wants("requestLine")
    for pair in (needsQuery ? rawQuery ?? "" : "").split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
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
    let fields =
      wants("headers") || wants("cookies") ? request.allHTTPHeaderFields ?? [:] : [:]
    var headers = fields.sorted { $0.key < $1.key }.map {
      (key: $0.key, value: TemplateValue.values([$0.value]))
    }
    if let host = url?.host,
      !fields.keys.contains(where: { $0.caseInsensitiveCompare("Host") == .orderedSame })
    {
      headers.append(("Host", .values([url?.port.map { "\(host):\($0)" } ?? host])))
    }
    var cookies: [(key: String, value: TemplateValue)] = []
    if let cookie = fields.first(where: { $0.key.caseInsensitiveCompare("Cookie") == .orderedSame }
    )?.value {
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
    let scheme = url?.scheme?.lowercased() ?? "http"
    let host = url?.host ?? "localhost"
    let port = url?.port ?? (scheme == "https" ? 443 : 80)
    let hostText = host.contains(":") ? "[\(host)]" : host
    let baseUrl = scheme + "://" + hostText + (url?.port.map { ":\($0)" } ?? "")
    // WireMock's method is a `RequestMethod`, not text: it renders as its name, but `eq` with
    // a string is false (measured), as it is for a query parameter's values.
    let method = TemplateValue.values([(request.httpMethod ?? "GET").uppercased()])
    let body = wants("body") ? String(decoding: request.httpBody ?? Data(), as: UTF8.self) : ""
    let requestLine: TemplateValue =
      !wants("requestLine")
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
          .string(wants("bodyAsBase64") ? (request.httpBody ?? Data()).base64EncodedString() : "")
        ),
        ("method", method), ("baseUrl", .string(baseUrl)),
        ("clientIp", .string("127.0.0.1")), ("requestLine", requestLine),
      ], json: false, caseInsensitive: false)
    return .object([("request", model)], json: false, caseInsensitive: false)
  }

  /// A query component decoded as WireMock decodes it: `%XX` escapes and `+` as a space.
  private static func decode(_ text: String) -> String {
    TemplateRenderer.formDecode(text)
  }
}
