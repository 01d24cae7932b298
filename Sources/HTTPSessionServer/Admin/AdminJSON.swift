import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The admin API's answers in WireMock 2.35's JSON shapes: a logged request, a served event
/// (`{"id", "request", "responseDefinition", "response", "wasMatched"}`), an error
/// (`{"errors": [{"code", "title", "detail", "source": {"pointer"}}]}`).
enum AdminJSON {
  /// `value` as pretty-printed JSON text with sorted keys, written by the package's own
  /// writer: the admin API's one model for JSON is ``JSONValue``, read by the bundle readers'
  /// parser and written by their writer, with no Foundation object in between.
  static func data(_ value: JSONValue) -> Data {
    JSONWriter.pretty(value)
  }

  /// WireMock's error document: one error with a code, a title, and where known the detail and
  /// the JSON pointer of the field at fault (`/request/urll`).
  static func errors(code: Int, title: String, detail: String? = nil, pointer: String? = nil)
    -> JSONValue
  {
    var error: [String: JSONValue] = ["code": .integer(Int64(code)), "title": .string(title)]
    if let detail { error["detail"] = .string(detail) }
    if let pointer { error["source"] = .object(["pointer": .string(pointer)]) }
    return .object(["errors": .array([.object(error)])])
  }

  /// An empty object, `{}`: the answer of the calls that only change something.
  static let empty = JSONValue.object([:])

  // MARK: - Request identifiers

  /// A logged request's `id`: a UUID that spells its task identifier, so that the journal
  /// needs no table of identifiers and an id names the same request for as long as it is kept.
  static func requestID(_ taskIdentifier: Int) -> String {
    let hex = String(UInt64(clamping: max(taskIdentifier, 0)), radix: 16)
    let digits = String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    return "00000000-0000-4000-8000-" + digits.suffix(12)
  }

  /// The task identifier that ``requestID(_:)`` spelled, or `nil` for any other text.
  static func taskIdentifier(ofRequestID id: String) -> Int? {
    // Exactly a UUID first: `Int(_:radix:)` alone would take a sign (`+0000000000a`).
    let prefix = "00000000-0000-4000-8000-"
    guard WireMockMapping.id(exactly: id) != nil, id.lowercased().hasPrefix(prefix) else {
      return nil
    }
    return Int(id.dropFirst(prefix.count), radix: 16)
  }

  // MARK: - Requests

  /// Reads a `since` parameter: an ISO 8601 date and time, with or without fractional seconds.
  static func date(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
  }

  /// A request as WireMock logs it: `url` (path and query as sent), `absoluteUrl`, `method`,
  /// `headers`, `queryParams`, `body` and `bodyAsBase64`, and `loggedDate` (milliseconds since
  /// 1970) with `loggedDateString` (ISO 8601 in UTC to the second, `2026-12-05T12:43:32Z`, as
  /// WireMock 2.35.1 writes it) when the server noted its arrival.
  static func loggedRequest(_ request: URLRequest, loggedAt date: Date?) -> JSONValue {
    let url = request.url
    let parts = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false) }
    var path = parts?.percentEncodedPath ?? "/"
    if path.isEmpty { path = "/" }
    if let query = parts?.percentEncodedQuery { path += "?" + query }
    var queryValues: [String: [JSONValue]] = [:]
    for item in parts?.queryItems ?? [] {
      queryValues[item.name, default: []].append(.string(item.value ?? ""))
    }
    var queryParams: [String: JSONValue] = [:]
    for (name, values) in queryValues {
      queryParams[name] = .object(["key": .string(name), "values": .array(values)])
    }
    let body = request.httpBody ?? Data()
    var object: [String: JSONValue] = [
      "url": .string(path),
      "absoluteUrl": .string(url?.absoluteString ?? path),
      "method": .string(request.httpMethod ?? "GET"),
      "clientIp": .string("127.0.0.1"),
      "headers": .object((request.allHTTPHeaderFields ?? [:]).mapValues { .string($0) }),
      "cookies": .object([:]),
      "browserProxyRequest": .bool(false),
      "queryParams": .object(queryParams),
      "body": .string(String(data: body, encoding: .utf8) ?? ""),
      "bodyAsBase64": .string(body.base64EncodedString()),
      "protocol": .string("HTTP/1.1"),
      "scheme": .string(parts?.scheme ?? "http"),
      "host": .string(parts?.host ?? ""),
    ]
    if let port = parts?.port { object["port"] = .integer(Int64(port)) }
    if let date {
      object["loggedDate"] = .integer(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
      // A formatter per request: formatters are not Sendable, and dates are listed rarely.
      let formatter = ISO8601DateFormatter()
      formatter.formatOptions = [.withInternetDateTime]
      object["loggedDateString"] = .string(formatter.string(from: date))
    }
    return .object(object)
  }

  /// One request and what answered it, as `GET /__admin/requests` lists them: `id`, `request`,
  /// `responseDefinition` and `response` (status, headers and body as sent), `wasMatched`.
  static func servedEvent(_ exchange: Exchange, loggedAt date: Date?) -> JSONValue {
    let http = exchange.response as? HTTPURLResponse
    let matched = exchange.stubMatcher != nil
    let status = JSONValue.integer(Int64(http?.statusCode ?? (matched ? 500 : 404)))
    var headers: [String: JSONValue] = [:]
    for (name, value) in http?.allHeaderFields ?? [:] {
      headers[String(describing: name)] = .string(String(describing: value))
    }
    let body = exchange.body ?? Data()
    var definition: [String: JSONValue] = ["status": status]
    if !matched { definition["fromConfiguredStub"] = .bool(false) }
    var response: [String: JSONValue] = [
      "status": status,
      "body": .string(String(data: body, encoding: .utf8) ?? ""),
      "bodyAsBase64": .string(body.base64EncodedString()),
    ]
    if !headers.isEmpty { response["headers"] = .object(headers) }
    // An unmatched request's error is the mock's way of saying "no stub": the client got 404.
    if matched, let error = exchange.errorSummary {
      definition["fault"] = .string(error)
      response["fault"] = .string(error)
    }
    return .object([
      "id": .string(requestID(exchange.taskIdentifier)),
      "request": loggedRequest(exchange.request, loggedAt: date),
      "responseDefinition": .object(definition),
      "response": .object(response),
      "wasMatched": .bool(matched),
    ])
  }
}
