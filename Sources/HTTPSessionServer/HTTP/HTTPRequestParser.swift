import Foundation

/// An incremental HTTP/1.1 request parser: feed it bytes as they arrive, take requests out in
/// order.
///
/// It is a pure value with no I/O, so the connection, the unit tests and the fuzzer drive it the
/// same way. It never traps: any input ends in a request, "need more bytes" or an
/// ``HTTPParseError``, after which it only repeats that error. It is strict where leniency
/// lets two parsers disagree about where a request ends (RFC 9112 §11.2, request smuggling):
/// bare LF, obsolete line folding, whitespace before a colon, `Content-Length` with
/// `Transfer-Encoding`, and differing `Content-Length`s are refused, not repaired.
package struct HTTPRequestParser: Sendable {
  /// What ``next()`` found.
  package enum Step: Equatable, Sendable {
    /// The bytes so far do not finish a request.
    case needMore
    /// A whole request; its bytes are consumed.
    case request(HTTPRequest)
    /// The input is malformed or over a limit; the connection must answer and close.
    case failure(HTTPParseError)
  }

  private enum State: Sendable {
    case head
    case body(HTTPRequest, Framing)
    case failed(HTTPParseError)
  }

  private enum Framing: Sendable {
    case length(Int)
    case chunked(Chunked)
  }

  private enum Chunked: Sendable {
    case size
    case data(remaining: Int)
    case dataEnd
    case trailers(bytes: Int)
  }

  /// The most bytes the request line and header fields may take together.
  package let maxHeadBytes: Int
  /// The most bytes a body may have (after chunked decoding).
  package let maxBodyBytes: Int
  /// The most bytes the body of a request to the admin API (`/__admin` and below) may have,
  /// when smaller than ``maxBodyBytes``; `nil` when the server has no admin API. A longer one
  /// fails with ``HTTPParseError/adminBodyTooLarge``.
  package var maxAdminBodyBytes: Int?
  /// The body limit of the request being read.
  private var bodyLimit = 0
  private static let maxChunkLineBytes = 1024

  private var buffer: [UInt8] = []
  /// Where the unconsumed bytes start in `buffer`.
  private var start = 0
  /// How far the head scan has looked, relative to `start`, so bytes are scanned once.
  private var scanned = 0
  /// Empty lines skipped before a request line (RFC 9112 §2.2), counted against the head limit.
  private var skipped = 0
  private var state = State.head
  /// The decoded body of a chunked request so far.
  private var chunkedBody = Data()

  package init(maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int = 32 * 1024 * 1024) {
    self.maxHeadBytes = max(maxHeadBytes, 16)
    self.maxBodyBytes = max(maxBodyBytes, 0)
  }

  /// The number of bytes received and not yet consumed by a request.
  package var bufferedByteCount: Int { buffer.count - start }

  /// Whether no request is in progress: nothing is buffered and no head is waiting for its body.
  package var isIdle: Bool {
    if case .head = state { return bufferedByteCount == 0 }
    return false
  }

  /// The head of a request whose body has not fully arrived, if there is one (the connection
  /// answers `Expect: 100-continue` for it).
  package var pendingHead: HTTPRequest? {
    if case .body(let head, _) = state { return head }
    return nil
  }

  /// Adds bytes that arrived from the client.
  package mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
    if case .failed = state { return }
    buffer.append(contentsOf: bytes)
  }

  /// Takes the bytes received and not consumed by a request: after an upgrade they belong to
  /// the new protocol.
  package mutating func takeBuffered() -> [UInt8] {
    defer {
      buffer.removeAll()
      start = 0
    }
    return Array(buffer[start...])
  }

  /// The next request, if the buffered bytes finish one.
  package mutating func next() -> Step {
    let step = advance()
    if case .failure(let error) = step { state = .failed(error) }
    compact()
    return step
  }

  private mutating func compact() {
    if start == buffer.count {
      buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
      start = 0
    } else if start > 64 * 1024 && start * 2 > buffer.count {
      buffer.removeSubrange(0..<start)
      start = 0
    }
  }

  private mutating func advance() -> Step {
    while true {
      switch state {
      case .failed(let error):
        return .failure(error)
      case .head:
        switch scanHead() {
        case .needMore: return .needMore
        case .failure(let error): return .failure(error)
        case .request(let head):
          switch framing(of: head) {
          case .failure(let error): return .failure(error)
          case .success(.length(0)):
            state = .head
            return .request(head)
          case .success(let framing):
            state = .body(head, framing)
            chunkedBody = Data()
          }
        }
      case .body(let head, .length(let length)):
        guard bufferedByteCount >= length else { return .needMore }
        var request = head
        request.body = Data(buffer[start..<(start + length)])
        start += length
        state = .head
        return .request(request)
      case .body(let head, .chunked(let chunked)):
        switch readChunked(chunked, head) {
        case .needMore: return .needMore
        case .failure(let error): return .failure(error)
        case .request(let request):
          state = .head
          return .request(request)
        }
      }
    }
  }

  // MARK: - Head

  private mutating func scanHead() -> Step {
    // Empty lines before the request line are skipped (RFC 9112 §2.2).
    while scanned == 0, bufferedByteCount >= 1, buffer[start] == 13 {
      // A lone CR may be the start of an empty line: wait for the byte after it.
      guard bufferedByteCount >= 2 else { return .needMore }
      guard buffer[start + 1] == 10 else { break }
      start += 2
      skipped += 2
      if skipped > maxHeadBytes { return .failure(.headTooLarge) }
    }
    if scanned == 0, bufferedByteCount >= 1, buffer[start] == 10 { return .failure(.bareLineFeed) }
    var index = start + scanned
    while index < buffer.count {
      let byte = buffer[index]
      if byte == 0 { return .failure(.nulByte) }
      if byte == 10 {
        guard index > start, buffer[index - 1] == 13 else { return .failure(.bareLineFeed) }
        if index - start >= 3, buffer[index - 2] == 10, buffer[index - 3] == 13 {
          let end = index + 1
          if end - start + skipped > maxHeadBytes { return .failure(.headTooLarge) }
          let result = parseHead(buffer[start..<(end - 4)])
          start = end
          scanned = 0
          skipped = 0
          switch result {
          case .success(let head): return .request(head)
          case .failure(let error): return .failure(error)
          }
        }
      }
      index += 1
      if index - start + skipped > maxHeadBytes { return .failure(.headTooLarge) }
    }
    scanned = index - start
    return .needMore
  }

  /// Parses the head without its final CRLF CRLF: the request line, then header lines, each
  /// separated by CRLF (bare LF and NUL were refused while scanning).
  private func parseHead(_ bytes: ArraySlice<UInt8>) -> Result<HTTPRequest, HTTPParseError> {
    var lines: [ArraySlice<UInt8>] = []
    var lineStart = bytes.startIndex
    var index = bytes.startIndex
    while index < bytes.endIndex {
      if bytes[index] == 13 {
        // Scanning guaranteed every LF follows a CR; a CR must be followed by an LF.
        guard index + 1 < bytes.endIndex, bytes[index + 1] == 10 else {
          return .failure(.bareLineFeed)
        }
        lines.append(bytes[lineStart..<index])
        index += 2
        lineStart = index
      } else {
        index += 1
      }
    }
    lines.append(bytes[lineStart..<bytes.endIndex])
    guard let requestLine = lines.first else { return .failure(.badRequestLine) }
    var request: HTTPRequest
    switch Self.parseRequestLine(requestLine) {
    case .success(let parsed): request = parsed
    case .failure(let error): return .failure(error)
    }
    for line in lines.dropFirst() {
      switch Self.parseHeaderLine(line) {
      case .success(let field): request.headers.append(field)
      case .failure(let error): return .failure(error)
      }
    }
    if request.minorVersion == 1 {
      let hosts = request.headers.filter { HTTPRequest.sameName($0.name, "Host") }
      guard hosts.count == 1 else { return .failure(.missingHost) }
    }
    return .success(request)
  }

  private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<
    HTTPRequest, HTTPParseError
  > {
    let parts = line.split(separator: 32, omittingEmptySubsequences: false)
    guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
      return .failure(.badRequestLine)
    }
    let (method, target, version) = (parts[0], parts[1], parts[2])
    guard method.allSatisfy(isTokenByte) else { return .failure(.invalidMethod) }
    guard target.allSatisfy({ $0 > 32 && $0 < 127 }) else { return .failure(.invalidTarget) }
    let targetText = String(decoding: target, as: UTF8.self)
    let lowered = targetText.lowercased()
    guard
      targetText.hasPrefix("/") || targetText == "*" || lowered.hasPrefix("http://")
        || lowered.hasPrefix("https://")
    else { return .failure(.invalidTarget) }
    let minor: Int
    switch Array(version) {
    case Array("HTTP/1.1".utf8): minor = 1
    case Array("HTTP/1.0".utf8): minor = 0
    default:
      let text = Array(version)
      let looksLikeVersion =
        text.count == 8 && text.starts(with: Array("HTTP/".utf8)) && isDigit(text[5])
        && text[6] == 46 && isDigit(text[7])
      return .failure(looksLikeVersion ? .unsupportedVersion : .badRequestLine)
    }
    return .success(
      HTTPRequest(
        method: String(decoding: method, as: UTF8.self), target: targetText, minorVersion: minor,
        headers: [], body: Data()))
  }

  private static func parseHeaderLine(_ line: ArraySlice<UInt8>) -> Result<
    (name: String, value: String), HTTPParseError
  > {
    guard let first = line.first else { return .failure(.headerWithoutColon) }
    if first == 32 || first == 9 { return .failure(.obsoleteLineFolding) }
    guard let colon = line.firstIndex(of: 58) else { return .failure(.headerWithoutColon) }
    let name = line[line.startIndex..<colon]
    guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return .failure(.invalidHeaderName) }
    var value = line[(colon + 1)...]
    while let byte = value.first, byte == 32 || byte == 9 { value = value.dropFirst() }
    while let byte = value.last, byte == 32 || byte == 9 { value = value.dropLast() }
    guard value.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
      return .failure(.invalidHeaderValue)
    }
    let text =
      String(bytes: value, encoding: .utf8)
      ?? String(value.map { Character(Unicode.Scalar($0)) })
    return .success((String(decoding: name, as: UTF8.self), text))
  }

  // MARK: - Framing

  /// The error for a body over ``bodyLimit``.
  private var tooLarge: HTTPParseError {
    bodyLimit < maxBodyBytes ? .adminBodyTooLarge : .bodyTooLarge
  }

  /// The body limit of `head`: ``maxAdminBodyBytes`` for the admin API, when smaller.
  private func bodyLimit(of head: HTTPRequest) -> Int {
    guard let admin = maxAdminBodyBytes, admin < maxBodyBytes else { return maxBodyBytes }
    let path = head.pathAndQuery.utf8
    let prefix = "/__admin".utf8
    guard path.starts(with: prefix) else { return maxBodyBytes }
    let next = path.dropFirst(prefix.count).first
    guard next == nil || next == UInt8(ascii: "/") || next == UInt8(ascii: "?") else {
      return maxBodyBytes
    }
    return max(admin, 0)
  }

  private mutating func framing(of head: HTTPRequest) -> Result<Framing, HTTPParseError> {
    bodyLimit = bodyLimit(of: head)
    let encodings = head.headers.filter {
      HTTPRequest.sameName($0.name, "Transfer-Encoding")
    }
    let lengths = head.headers.filter {
      HTTPRequest.sameName($0.name, "Content-Length")
    }
    if !encodings.isEmpty {
      guard lengths.isEmpty else { return .failure(.contentLengthWithTransferEncoding) }
      guard head.minorVersion == 1 else { return .failure(.unsupportedTransferEncoding) }
      let codings = encodings.flatMap { $0.value.split(separator: ",") }
        .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        .filter { !$0.isEmpty }
      guard codings == ["chunked"] else { return .failure(.unsupportedTransferEncoding) }
      return .success(.chunked(.size))
    }
    var length: Int?
    for field in lengths {
      for element in field.value.split(separator: ",", omittingEmptySubsequences: false) {
        let digits = element.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.utf8.allSatisfy(Self.isDigit) else {
          return .failure(.invalidContentLength)
        }
        let trimmed = digits.drop { $0 == "0" }
        // More than 18 digits cannot be an Int; it is over any body limit anyway.
        guard trimmed.count <= 18, let value = Int(trimmed.isEmpty ? "0" : trimmed) else {
          return .failure(tooLarge)
        }
        if let length, length != value { return .failure(.conflictingContentLengths) }
        length = value
      }
    }
    let value = length ?? 0
    guard value <= bodyLimit else { return .failure(tooLarge) }
    return .success(.length(value))
  }

  // MARK: - Chunked bodies

  private mutating func readChunked(_ initial: Chunked, _ head: HTTPRequest) -> Step {
    var chunked = initial
    defer {
      if case .body = state { state = .body(head, .chunked(chunked)) }
    }
    while true {
      switch chunked {
      case .size:
        let lineEnd: Int
        switch readLine(maxLength: Self.maxChunkLineBytes) {
        case .needMore: return .needMore
        case .invalid, .tooLong: return .failure(.invalidChunk)
        case .line(let end): lineEnd = end
        }
        let line = buffer[start..<lineEnd]
        start = lineEnd + 2
        guard let size = Self.chunkSize(line) else { return .failure(.invalidChunk) }
        guard size <= bodyLimit - chunkedBody.count else { return .failure(tooLarge) }
        chunked = size == 0 ? .trailers(bytes: 0) : .data(remaining: size)
      case .data(let remaining):
        let available = min(remaining, bufferedByteCount)
        if available > 0 {
          chunkedBody.append(contentsOf: buffer[start..<(start + available)])
          start += available
        }
        if available < remaining {
          chunked = .data(remaining: remaining - available)
          return .needMore
        }
        chunked = .dataEnd
      case .dataEnd:
        guard bufferedByteCount >= 2 else { return .needMore }
        guard buffer[start] == 13, buffer[start + 1] == 10 else { return .failure(.invalidChunk) }
        start += 2
        chunked = .size
      case .trailers(let bytes):
        // Trailer fields are read and dropped; the empty line ends the body.
        let lineEnd: Int
        switch readLine(maxLength: maxHeadBytes - bytes) {
        case .needMore: return .needMore
        case .invalid: return .failure(.invalidChunk)
        case .tooLong: return .failure(.headTooLarge)
        case .line(let end): lineEnd = end
        }
        let length = lineEnd - start
        start = lineEnd + 2
        if length == 0 {
          var request = head
          request.body = chunkedBody
          chunkedBody = Data()
          return .request(request)
        }
        chunked = .trailers(bytes: bytes + length + 2)
      }
    }
  }

  private enum Line {
    /// A line ends at this index (its CR).
    case line(end: Int)
    case needMore
    /// A bare LF or a NUL byte came before the line's end.
    case invalid
    /// More than `maxLength` bytes and no line end.
    case tooLong
  }

  /// Reads the line at `start`, of at most `maxLength` bytes before its CRLF. Bytes are judged
  /// in order and only within `maxLength + 2` bytes, so the answer does not depend on how the
  /// input was split into reads.
  private func readLine(maxLength: Int) -> Line {
    let limit = max(maxLength, 0) + 2
    let end = min(buffer.count, start + limit)
    var index = start
    while index < end {
      switch buffer[index] {
      case 10:
        guard index > start, buffer[index - 1] == 13 else { return .invalid }
        return .line(end: index - 1)
      case 0:
        return .invalid
      default:
        index += 1
      }
    }
    return end - start >= limit ? .tooLong : .needMore
  }

  /// The size of a chunk-size line (`1a`, `1A;name=value`), or `nil` if it is not 1 to 15
  /// hexadecimal digits followed by optional extensions.
  private static func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
    var digits = line.prefix { $0 != 59 }  // up to ';'
    while let last = digits.last, last == 32 || last == 9 { digits = digits.dropLast() }
    guard !digits.isEmpty, digits.count <= 15 else { return nil }
    var size = 0
    for byte in digits {
      let digit: Int
      switch byte {
      case 48...57: digit = Int(byte) - 48
      case 65...70: digit = Int(byte) - 55
      case 97...102: digit = Int(byte) - 87
      default: return nil
      }
      size = size * 16 + digit
    }
    // Extensions may hold any visible byte, but no control character other than tab.
    guard line.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else { return nil }
    return size
  }

  // MARK: - Bytes

  private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

  /// A `tchar` of RFC 9110 §5.6.2: letters, digits and ``!#$%&'*+-.^_`|~``.
  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 48...57, 65...90, 97...122: return true
    case 33, 35, 36, 37, 38, 39, 42, 43, 45, 46, 94, 95, 96, 124, 126: return true
    default: return false
    }
  }
}
