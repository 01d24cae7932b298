/// Why the request parser refused a request, and the status the server answers with.
///
/// The parser never traps: every malformed or over-limit input ends in one of these cases.
package enum HTTPParseError: Error, Equatable, Sendable {
  /// The request line is not `METHOD SP target SP HTTP/x.y`.
  case badRequestLine
  /// The method has a byte that is not a token character (for example non-ASCII).
  case invalidMethod
  /// The request target is neither an origin-form path nor an absolute `http` URL.
  case invalidTarget
  /// The version is not `HTTP/1.0` or `HTTP/1.1`.
  case unsupportedVersion
  /// A header line has no colon.
  case headerWithoutColon
  /// A header line starts with a space or a tab (obsolete line folding).
  case obsoleteLineFolding
  /// A header name is empty, has a space before the colon, or a byte that is not a token
  /// character.
  case invalidHeaderName
  /// A header value has a control character.
  case invalidHeaderValue
  /// A line ends in a bare LF instead of CRLF.
  case bareLineFeed
  /// The head has a NUL byte.
  case nulByte
  /// An HTTP/1.1 request without exactly one `Host` header.
  case missingHost
  /// A `Content-Length` that is not a decimal number.
  case invalidContentLength
  /// Two `Content-Length` values that differ.
  case conflictingContentLengths
  /// `Content-Length` together with `Transfer-Encoding` (a request-smuggling vector).
  case contentLengthWithTransferEncoding
  /// A `Transfer-Encoding` other than `chunked`, or one in an HTTP/1.0 request.
  case unsupportedTransferEncoding
  /// A chunk-size line that is not hexadecimal, too long, or not ended by CRLF; or chunk data
  /// not followed by CRLF.
  case invalidChunk
  /// The request line and headers together exceed the head limit.
  case headTooLarge
  /// The body exceeds the body limit.
  case bodyTooLarge
  /// The body of a request to the admin API exceeds the admin body limit.
  case adminBodyTooLarge

  /// The status code the server answers with: 431, 413 or 400.
  package var status: Int {
    switch self {
    case .headTooLarge: 431
    case .bodyTooLarge, .adminBodyTooLarge: 413
    default: 400
    }
  }

  /// A one-line explanation, sent as the `text/plain` body of the error response.
  package var reason: String {
    switch self {
    case .badRequestLine: "The request line is not METHOD SP target SP HTTP/1.x."
    case .invalidMethod: "The method is not a token."
    case .invalidTarget: "The request target is not a path or an absolute http URL."
    case .unsupportedVersion: "Only HTTP/1.0 and HTTP/1.1 are served."
    case .headerWithoutColon: "A header line has no colon."
    case .obsoleteLineFolding: "A header line starts with whitespace (obsolete line folding)."
    case .invalidHeaderName: "A header name is not a token."
    case .invalidHeaderValue: "A header value has a control character."
    case .bareLineFeed: "A line ends in a bare LF; HTTP lines end in CRLF."
    case .nulByte: "The request head has a NUL byte."
    case .missingHost: "An HTTP/1.1 request needs exactly one Host header."
    case .invalidContentLength: "Content-Length is not a decimal number."
    case .conflictingContentLengths: "Two different Content-Length values."
    case .contentLengthWithTransferEncoding:
      "Content-Length together with Transfer-Encoding is refused (request smuggling)."
    case .unsupportedTransferEncoding: "Only Transfer-Encoding: chunked is supported, in HTTP/1.1."
    case .invalidChunk: "A chunk of the chunked body is malformed."
    case .headTooLarge: "The request line and headers exceed the server's head limit."
    case .bodyTooLarge: "The request body exceeds the server's body limit."
    case .adminBodyTooLarge:
      "The request body exceeds the admin API's body limit (ServerLimits.maxAdminBodyBytes)."
    }
  }
}
