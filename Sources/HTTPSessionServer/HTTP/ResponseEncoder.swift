import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Turns the mock's answer into the bytes of an HTTP/1.1 response.
enum ResponseEncoder {
  /// Header fields the server writes itself; a stub's own values for them are dropped. A
  /// stub's `Keep-Alive` is sent as declared (WireMock sends it): it only advises the client.
  private static let managed: Set<String> = [
    "content-length", "transfer-encoding", "connection",
  ]

  /// A complete response: status line, the stub's headers, `Content-Length` and the body
  /// (no body for `HEAD`, 1xx, 204 and 304).
  ///
  /// Without `withBody`, only the head, for a caller that writes the body itself where
  /// ``carriesBody(_:to:cache:)`` says it goes.
  static func encode(
    response: URLResponse?, body: Data, request: HTTPRequest, keepsAlive: Bool,
    cache: inout HeadCache, withBody: Bool = true
  ) -> [UInt8] {
    let stub = cache.head(for: response)
    var fields: [(String, String)] = []
    let hasBody = StubResponse.statusCarriesBody(stub.status)
    if hasBody {
      // A HEAD answer has no body to count; it keeps the length the response names, that is,
      // the length a GET would get.
      let length = request.method == "HEAD" ? (stub.namedLength ?? body.count) : body.count
      fields.append(("Content-Length", String(max(length, 0))))
    }
    appendConnection(&fields, request: request, keepsAlive: keepsAlive && stub.status >= 200)
    var bytes = head(stub, fields: fields)
    if withBody, hasBody, request.method != "HEAD" { bytes.append(contentsOf: body) }
    return bytes
  }

  /// Whether the body of `response` goes on the wire after its head: not for `HEAD`, 1xx,
  /// 204 and 304.
  static func carriesBody(
    _ response: URLResponse?, to request: HTTPRequest, cache: inout HeadCache
  ) -> Bool {
    StubResponse.statusCarriesBody(cache.head(for: response).status) && request.method != "HEAD"
  }

  /// What a response contributes to every head it is written with: its status line and its
  /// own header lines, sanitized (names are tokens; values lose CR, LF and NUL, so a stub's
  /// header cannot split the response), without those the server writes itself, sorted by
  /// name.
  struct StubHead {
    let status: Int
    /// `HTTP/1.1 200 OK\r\n` and `Name: value\r\n` for each of the stub's fields.
    let lines: [UInt8]
    /// The stub's own `Content-Length`, which a `HEAD` answer repeats.
    let namedLength: Int?

    init(of response: URLResponse?) {
      let http = response as? HTTPURLResponse
      status = http?.statusCode ?? 200
      namedLength = http?.value(forHTTPHeaderField: "Content-Length").flatMap { Int($0) }
      // A stub's own phrase was checked for control characters when the stub was made.
      let phrase =
        (http as? StubHTTPURLResponse)?.reasonPhrase ?? ResponseEncoder.reasonPhrase(status)
      var text = "HTTP/1.1 \(status) \(phrase)\r\n"
      for (name, value) in ResponseEncoder.stubFields(of: response) {
        ResponseEncoder.appendLine(&text, name, value)
      }
      lines = Array(text.utf8)
    }
  }

  /// The ``StubHead`` of the last response a connection wrote. The mock hands over the same
  /// response object for each answer of a stub to a URL (it keeps the one it built), so a
  /// connection that serves one stub again and again builds its head once.
  struct HeadCache {
    private var response: URLResponse?
    private var cached: StubHead?

    init() {}

    /// The head of `response`, built anew unless it is the object of the last call.
    mutating func head(for response: URLResponse?) -> StubHead {
      if let cached, let response, self.response === response { return cached }
      let built = StubHead(of: response)
      (self.response, cached) = (response, built)
      return built
    }
  }

  /// How a streamed body is framed on the wire.
  enum Framing: Equatable {
    /// `Transfer-Encoding: chunked`: each piece is a chunk, and a last empty chunk ends it.
    case chunked
    /// An HTTP/1.0 client: the pieces as they are, and the connection closes after the last.
    case untilClose
    /// No body at all (`HEAD`, 1xx, 204, 304): the pieces are dropped.
    case none
  }

  /// The head of a response whose body follows in pieces (a dribbled stub): chunked for
  /// HTTP/1.1 clients, unframed and closing for HTTP/1.0 ones; no `Content-Length` either way.
  static func encodeStreamedHead(response: URLResponse, request: HTTPRequest, keepsAlive: Bool)
    -> (bytes: [UInt8], framing: Framing)
  {
    let stub = StubHead(of: response)
    var fields: [(String, String)] = []
    let framing: Framing
    if !StubResponse.statusCarriesBody(stub.status) || request.method == "HEAD" {
      framing = .none
      appendConnection(&fields, request: request, keepsAlive: keepsAlive && stub.status >= 200)
    } else if request.minorVersion == 0 {
      framing = .untilClose
      appendConnection(&fields, request: request, keepsAlive: false)
    } else {
      framing = .chunked
      fields.append(("Transfer-Encoding", "chunked"))
      appendConnection(&fields, request: request, keepsAlive: keepsAlive && stub.status >= 200)
    }
    return (head(stub, fields: fields), framing)
  }

  /// One piece of a streamed body, framed as `framing` says (nothing for an empty piece: an
  /// empty chunk would end the body).
  static func encodePiece(_ piece: Data, framing: Framing) -> [UInt8] {
    guard !piece.isEmpty else { return [] }
    switch framing {
    case .none: return []
    case .untilClose: return Array(piece)
    case .chunked:
      var bytes = Array((String(piece.count, radix: 16) + "\r\n").utf8)
      bytes.append(contentsOf: piece)
      bytes.append(contentsOf: [13, 10])
      return bytes
    }
  }

  /// The end of a streamed body: the last, empty chunk.
  static func encodeEnd(framing: Framing) -> [UInt8] {
    framing == .chunked ? Array("0\r\n\r\n".utf8) : []
  }

  /// The stub's own header fields, without those the server writes itself, sorted by name.
  fileprivate static func stubFields(of response: URLResponse?) -> [(String, String)] {
    var fields: [(String, String)] = []
    if let http = response as? HTTPURLResponse {
      // Headers with several values (several `Set-Cookie`) go out one line a value.
      let multiple = (http as? StubHTTPURLResponse)?.values ?? [:]
      for (key, value) in http.allHeaderFields {
        let name = "\(key)"
        guard !managed.contains(name.lowercased()) else { continue }
        if let values = multiple.first(where: {
          $0.key.caseInsensitiveCompare(name) == .orderedSame
        })?.value {
          for value in values { fields.append((name, value)) }
        } else {
          fields.append((name, "\(value)"))
        }
      }
      if multiple.isEmpty {
        fields.sort { $0.0.lowercased() < $1.0.lowercased() }
      } else {
        // Stable: the values of one header keep their order.
        fields = fields.enumerated().sorted {
          let (a, b) = ($0.element.0.lowercased(), $1.element.0.lowercased())
          return a != b ? a < b : $0.offset < $1.offset
        }.map(\.element)
      }
    } else if let mimeType = response?.mimeType {
      fields.append(("Content-Type", mimeType))
    }
    return fields
  }

  /// The header fields of ``encodeText(status:text:request:keepsAlive:extraFields:)``'s
  /// response, whose body is `byteCount` bytes, in the order they are written.
  static func textFields(
    byteCount: Int, request: HTTPRequest?, keepsAlive: Bool, extraFields: [(String, String)]
  ) -> [(String, String)] {
    var fields = [
      ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(byteCount)),
    ]
    appendConnection(&fields, request: request, keepsAlive: keepsAlive)
    return fields + extraFields
  }

  /// A `text/plain` response the server makes itself: a 404 with the near-miss report, a 4xx
  /// for a request it refused, a 503 for a connection over the limit; `extraFields` follow
  /// the framing and `Connection` fields.
  static func encodeText(
    status: Int, text: String, request: HTTPRequest?, keepsAlive: Bool,
    extraFields: [(String, String)] = []
  ) -> [UInt8] {
    let body = Array(text.utf8)
    let fields = textFields(
      byteCount: body.count, request: request, keepsAlive: keepsAlive, extraFields: extraFields)
    var bytes = head(status: status, fields: fields)
    if request?.method != "HEAD" { bytes.append(contentsOf: body) }
    return bytes
  }

  /// The `101 Switching Protocols` head that accepts a WebSocket upgrade: `accept` is the
  /// `Sec-WebSocket-Accept` value, `subprotocol` the `Sec-WebSocket-Protocol` one, if any.
  static func encodeSwitchingProtocols(accept: String, subprotocol: String?) -> [UInt8] {
    var fields = [
      ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept),
    ]
    if let subprotocol { fields.append(("Sec-WebSocket-Protocol", subprotocol)) }
    return head(status: 101, fields: fields)
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

  static func head(status: Int, fields: [(String, String)]) -> [UInt8] {
    var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
    for (name, value) in fields { appendLine(&text, name, value) }
    text += "\r\n"
    return Array(text.utf8)
  }

  /// A stub's head, then `fields` (the server's own: framing, `Connection`), then the blank
  /// line.
  private static func head(_ stub: StubHead, fields: [(String, String)]) -> [UInt8] {
    var text = ""
    for (name, value) in fields { appendLine(&text, name, value) }
    text += "\r\n"
    var bytes = stub.lines
    bytes.append(contentsOf: text.utf8)
    return bytes
  }

  /// Appends `name: value` and CRLF, unless the name is not a token; CR, LF and NUL are taken
  /// out of the value, so that a stub's header cannot split the response.
  fileprivate static func appendLine(_ text: inout String, _ name: String, _ value: String) {
    guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { return }
    if value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
      let clean = String(value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" })
      text += "\(name): \(clean)\r\n"
    } else {
      text += "\(name): \(value)\r\n"
    }
  }

  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 48...57, 65...90, 97...122: return true
    case 33, 35, 36, 37, 38, 39, 42, 43, 45, 46, 94, 95, 96, 124, 126: return true
    default: return false
    }
  }

  /// The status line's text for `status`: the reason phrases of the IANA HTTP Status Code
  /// Registry (RFC 9110 and the RFCs it names); a code the registry does not name gets
  /// `Status N`.
  static func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 101: "Switching Protocols"
    case 102: "Processing"
    case 103: "Early Hints"
    case 200: "OK"
    case 201: "Created"
    case 202: "Accepted"
    case 203: "Non-Authoritative Information"
    case 204: "No Content"
    case 205: "Reset Content"
    case 206: "Partial Content"
    case 207: "Multi-Status"
    case 208: "Already Reported"
    case 226: "IM Used"
    case 300: "Multiple Choices"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 305: "Use Proxy"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 402: "Payment Required"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 406: "Not Acceptable"
    case 407: "Proxy Authentication Required"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 410: "Gone"
    case 411: "Length Required"
    case 412: "Precondition Failed"
    case 413: "Content Too Large"
    case 414: "URI Too Long"
    case 415: "Unsupported Media Type"
    case 416: "Range Not Satisfiable"
    case 417: "Expectation Failed"
    case 421: "Misdirected Request"
    case 422: "Unprocessable Content"
    case 423: "Locked"
    case 424: "Failed Dependency"
    case 425: "Too Early"
    case 426: "Upgrade Required"
    case 428: "Precondition Required"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 451: "Unavailable For Legal Reasons"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    case 505: "HTTP Version Not Supported"
    case 506: "Variant Also Negotiates"
    case 507: "Insufficient Storage"
    case 508: "Loop Detected"
    case 510: "Not Extended"
    case 511: "Network Authentication Required"
    default: "Status \(status)"
    }
  }
}
