import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The loopback server's HTTP/1.1 request parser, on arbitrary bytes.
//
// Input: the bytes a client sends on one connection. The harness parses them whole and one byte
// at a time (the two must agree: the parser is incremental), checks every request it accepts
// against the limits, serializes it canonically and parses that back to the same request, and
// builds the URLRequest and the response bytes the connection would.

private let maxHead = 1024
private let maxBody = 2048

/// One input for libFuzzer: the bytes of one connection.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
  let whole = steps(feeding: [bytes])
  let split = steps(feeding: bytes.map { [$0] })
  check(whole == split, "parsing whole gave \(whole), byte by byte \(split)")
  for step in whole {
    guard case .request(let request) = step else { continue }
    check(request.body.count <= maxBody, "a body of \(request.body.count) bytes passed the limit")
    check(
      request.minorVersion == 0 || request.minorVersion == 1, "version 1.\(request.minorVersion)")
    // The canonical form may be longer (": " after each name), so it gets room for that.
    let again = steps(feeding: [canonical(request)], maxHeadBytes: 2 * maxHead + 64)
    check(again == [.request(withoutFraming(request))], "\(request) reparsed as \(again)")
    if let urlRequest = Connection.urlRequest(for: request, baseURL: "http://127.0.0.1:8080") {
      // Foundation upper-cases the standard methods (`GeT` becomes `GET`); nothing else changes.
      check(
        urlRequest.httpMethod?.caseInsensitiveCompare(request.method) == .orderedSame,
        "the method \(request.method) became \(urlRequest.httpMethod ?? "nil")")
    }
    _ = ResponseEncoder.encodeText(status: 404, text: "x", request: request, keepsAlive: true)
    var echoed: [String: String] = [:]
    for (name, value) in request.headers { echoed[name] = value }
    checkEncodedHead(fields: echoed, for: request)
    _ = request.keepsAlive
    _ = request.expectsContinue
  }
  // The same bytes as a stub's header fields, unfiltered (the parser refuses CR, LF and NUL in
  // a request, so the echo above never carries them): `name:value` records split at 0x1E.
  if let plain = plainRequest {
    checkEncodedHead(fields: stubFields(from: bytes), for: plain)
  }
  if case .failure(let error) = whole.last {
    check([400, 413, 431].contains(error.status), "\(error) maps to \(error.status)")
  }
  return 0
}

/// Every step the parser takes over `pieces`, up to its first failure; a trailing `needMore`
/// is kept only when the input ends inside a request.
private func steps(feeding pieces: [[UInt8]], maxHeadBytes: Int = maxHead)
  -> [HTTPRequestParser.Step]
{
  var parser = HTTPRequestParser(maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBody)
  var result: [HTTPRequestParser.Step] = []
  for piece in pieces {
    parser.append(piece)
    while true {
      let step = parser.next()
      if case .needMore = step { break }
      result.append(step)
      if case .failure = step {
        check(parser.next() == step, "a failed parser did not repeat its failure")
        return result
      }
    }
  }
  if !parser.isIdle { result.append(.needMore) }
  return result
}

/// The request with its framing headers as `canonical` writes them: one Content-Length for
/// a body, none without.
private func withoutFraming(_ request: HTTPRequest) -> HTTPRequest {
  var result = request
  result.headers = request.headers.filter {
    let name = $0.name.lowercased()
    return name != "content-length" && name != "transfer-encoding"
  }
  if !request.body.isEmpty { result.headers.append(("Content-Length", String(request.body.count))) }
  return result
}

/// The request as a conforming client would send it, with its body by Content-Length.
private func canonical(_ request: HTTPRequest) -> [UInt8] {
  var text = "\(request.method) \(request.target) HTTP/1.\(request.minorVersion)\r\n"
  let headers = withoutFraming(request).headers
  var bytes = Array(text.utf8)
  for (name, value) in headers {
    bytes += Array(name.utf8) + Array(": ".utf8) + latin1OrUTF8(value) + [13, 10]
  }
  text = "\r\n"
  bytes += Array(text.utf8) + Array(request.body)
  return bytes
}

/// The bytes a header value was decoded from: UTF-8 when it was valid UTF-8, else Latin-1.
private func latin1OrUTF8(_ value: String) -> [UInt8] {
  if value.unicodeScalars.allSatisfy({ $0.value < 256 }),
    String(bytes: value.unicodeScalars.map { UInt8($0.value) }, encoding: .utf8) == nil
  {
    return value.unicodeScalars.map { UInt8($0.value) }
  }
  return Array(value.utf8)
}

/// A plain `GET /` to answer the stub-field checks.
private let plainRequest: HTTPRequest? = {
  let parsed = steps(feeding: [Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)])
  guard case .request(let request)? = parsed.first else { return nil }
  return request
}()

/// Header fields made of the input as it is: records split at 0x1E, each `name:value` at its
/// first colon, at most 16.
private func stubFields(from bytes: [UInt8]) -> [String: String] {
  var fields: [String: String] = [:]
  for record in bytes.split(separator: 0x1E).prefix(16) {
    guard let colon = record.firstIndex(of: 58) else { continue }
    fields[String(decoding: record[..<colon], as: UTF8.self)] = String(
      decoding: record[(colon + 1)...], as: UTF8.self)
  }
  return fields
}

/// A stub answering with `fields` (arbitrary names and values) gets a head that does not split:
/// every line between the status line and the blank line is one `name: value` field, and the
/// connection's head cache gives the same bytes the second time.
private func checkEncodedHead(fields: [String: String], for request: HTTPRequest) {
  guard let url = URL(string: "http://127.0.0.1:8080/"),
    let response = HTTPURLResponse(
      url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)
  else { return }
  var cache = ResponseEncoder.HeadCache()
  let body = Data("echo".utf8)
  let first = ResponseEncoder.encode(
    response: response, body: body, request: request, keepsAlive: true, cache: &cache)
  let second = ResponseEncoder.encode(
    response: response, body: body, request: request, keepsAlive: true, cache: &cache)
  check(first == second, "the cached head differs from the first")
  guard let end = first.firstRange(of: [13, 10, 13, 10]) else {
    check(false, "no blank line ends the head")
    return
  }
  check(
    Array(first[end.upperBound...]) == (request.method == "HEAD" ? [] : Array(body)),
    "the body after the head is not the stub's: the head ended early")
  // Bytes, not Characters: a combining mark after ": " would hide the space in a Character.
  let lines = first[..<end.lowerBound].split(
    separator: 10, omittingEmptySubsequences: false
  ).map { Array($0) }
  let statusLine = String(decoding: lines.first ?? [], as: UTF8.self)
  check(statusLine.hasPrefix("HTTP/1.1 200 "), "status line \(statusLine.debugDescription)")
  for (number, line) in lines.enumerated() {
    // Every line but the last ends with the CR of its CRLF; no other CR, LF or NUL.
    let text = number == lines.count - 1 ? line[...] : line.dropLast()
    check(
      (number == lines.count - 1 || line.last == 13) && !text.contains(13) && !text.contains(0),
      "the head split at \(String(decoding: line, as: UTF8.self).debugDescription)")
    if number > 0 {
      check(
        text.firstRange(of: [58, 32]) != nil,
        "not a field: \(String(decoding: line, as: UTF8.self).debugDescription)")
    }
  }
}
