import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Turns the mock's answer into the bytes of an HTTP/1.1 response.
enum ResponseEncoder {
  /// Header fields the server writes itself; a stub's own values for them are dropped.
  private static let managed: Set<String> = [
    "content-length", "transfer-encoding", "connection", "keep-alive",
  ]

  /// A complete response: status line, the stub's headers, `Content-Length` and the body
  /// (no body for `HEAD`, 1xx, 204 and 304).
  static func encode(
    response: URLResponse?, body: Data, request: HTTPRequest, keepsAlive: Bool
  ) -> [UInt8] {
    let http = response as? HTTPURLResponse
    let status = http?.statusCode ?? 200
    var fields: [(String, String)] = []
    if let http {
      for (key, value) in http.allHeaderFields {
        let name = "\(key)"
        guard !managed.contains(name.lowercased()) else { continue }
        fields.append((name, "\(value)"))
      }
      fields.sort { $0.0.lowercased() < $1.0.lowercased() }
    } else if let mimeType = response?.mimeType {
      fields.append(("Content-Type", mimeType))
    }
    let hasBody = !(100..<200).contains(status) && status != 204 && status != 304
    if hasBody {
      // A HEAD answer has no body to count; it keeps the length the response names, that is,
      // the length a GET would get.
      let named = http?.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) }
      let length = request.method == "HEAD" ? (named ?? body.count) : body.count
      fields.append(("Content-Length", String(max(length, 0))))
    }
    appendConnection(&fields, request: request, keepsAlive: keepsAlive && status >= 200)
    var bytes = head(status: status, fields: fields)
    if hasBody && request.method != "HEAD" { bytes.append(contentsOf: body) }
    return bytes
  }

  /// A `text/plain` response the server makes itself: a 404 with the near-miss report, or a
  /// 4xx for a request it refused.
  static func encodeText(status: Int, text: String, request: HTTPRequest?, keepsAlive: Bool)
    -> [UInt8]
  {
    let body = Array(text.utf8)
    var fields = [
      ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.count)),
    ]
    appendConnection(&fields, request: request, keepsAlive: keepsAlive)
    var bytes = head(status: status, fields: fields)
    if request?.method != "HEAD" { bytes.append(contentsOf: body) }
    return bytes
  }

  /// Whether the connection may carry another request after this response: not after an
  /// interim (1xx) status given as a final answer.
  static func allowsKeepAlive(_ response: URLResponse?) -> Bool {
    ((response as? HTTPURLResponse)?.statusCode ?? 200) >= 200
  }

  private static func appendConnection(
    _ fields: inout [(String, String)], request: HTTPRequest?, keepsAlive: Bool
  ) {
    if !keepsAlive {
      fields.append(("Connection", "close"))
    } else if request?.minorVersion == 0 {
      fields.append(("Connection", "keep-alive"))
    }
  }

  private static func head(status: Int, fields: [(String, String)]) -> [UInt8] {
    var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
    for (name, value) in fields {
      // A stub's header must not split the response: names are tokens, values lose CR, LF, NUL.
      guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { continue }
      let clean = String(value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" })
      text += "\(name): \(clean)\r\n"
    }
    text += "\r\n"
    return Array(text.utf8)
  }

  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 48...57, 65...90, 97...122: return true
    case 33, 35, 36, 37, 38, 39, 42, 43, 45, 46, 94, 95, 96, 124, 126: return true
    default: return false
    }
  }

  static func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 101: "Switching Protocols"
    case 200: "OK"
    case 201: "Created"
    case 202: "Accepted"
    case 204: "No Content"
    case 206: "Partial Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 410: "Gone"
    case 413: "Content Too Large"
    case 415: "Unsupported Media Type"
    case 422: "Unprocessable Content"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    default: "Status \(status)"
    }
  }
}
