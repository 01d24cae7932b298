import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

struct RawClientError: Error, CustomStringConvertible {
  let description: String
}

/// A blocking TCP client for 127.0.0.1 that writes bytes exactly as given, for requests no
/// well-behaved client would send. A 5 s receive timeout keeps a broken server from hanging the
/// suite; it is a safety net, not a timing assertion.
final class RawClient {
  let fd: Int32
  private var pending: [UInt8] = []

  init(port: Int) throws {
    // The descriptor is kept in a local until it is connected: once `fd` is set, a throw runs
    // `deinit` too, and a second `close` of the same number closes whatever another thread
    // has opened under it since (a server's wake signal, once, which killed the test run).
    #if canImport(Glibc) || canImport(Musl)
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw RawClientError(description: "socket() failed") }
    #if canImport(Darwin)
      var noSigPipe: Int32 = 1
      setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &noSigPipe, socklen_t(MemoryLayout<Int32>.size))
    #endif
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var yes: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      throw RawClientError(description: "connect() failed")
    }
    self.fd = fd
  }

  deinit { close(fd) }

  /// Shuts the connection down both ways, as a client that leaves does; the descriptor itself
  /// is closed when the client goes.
  func shutDown() { _ = shutdown(fd, Int32(SHUT_RDWR)) }

  func send(_ text: String) { send(Array(text.utf8)) }

  func send(_ bytes: [UInt8]) {
    #if canImport(Glibc) || canImport(Musl)
      let flags = Int32(MSG_NOSIGNAL)
    #else
      let flags: Int32 = 0
    #endif
    var sent = 0
    while sent < bytes.count {
      let n = bytes[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count, flags) }
      guard n > 0 else { return }
      sent += n
    }
  }

  /// Reads until the server closes the connection (or the safety timeout).
  func readToEnd() -> String {
    var received = pending
    pending = []
    while let chunk = readChunk() { received += chunk }
    return String(decoding: received, as: UTF8.self)
  }

  /// Whether the server closed the connection without sending anything more.
  func closedWithoutData() -> Bool {
    pending.isEmpty && readChunk() == nil
  }

  /// Whether the server has sent something (or closed) within `milliseconds`: a bounded wait
  /// on the socket, which paces a client that sends until the server answers.
  func hasDataToRead(withinMilliseconds milliseconds: Int32) -> Bool {
    if !pending.isEmpty { return true }
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, milliseconds) > 0
  }

  /// Bytes received and not read yet.
  var bufferedByteCount: Int { pending.count }

  /// Reads until the buffer holds `marker`; returns the count of bytes up to its end.
  fileprivate func readUntil(_ marker: [UInt8]) -> Int? {
    while true {
      if let range = pending.firstRange(of: marker) { return range.upperBound }
      guard let chunk = readChunk() else { return nil }
      pending += chunk
    }
  }

  /// Reads until the buffer holds at least `count` bytes.
  fileprivate func fill(_ count: Int) -> Bool {
    while pending.count < count {
      guard let chunk = readChunk() else { return false }
      pending += chunk
    }
    return true
  }

  /// Removes and returns the first `count` buffered bytes.
  fileprivate func take(_ count: Int) -> [UInt8] {
    defer { pending.removeFirst(count) }
    return Array(pending[..<count])
  }

  private func readChunk() -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    return n > 0 ? Array(buffer[0..<n]) : nil
  }

  /// Reads one response with a `Content-Length` body: (status, headers, body); nil if the
  /// connection closed first.
  func readResponse(head: Bool = false) -> (status: Int, headers: [String: String], body: String)? {
    while true {
      if let end = pending.firstRange(of: [13, 10, 13, 10]) {
        let headText = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
        guard let (status, headers) = Self.parseHead(headText) else { return nil }
        let length = head ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while pending.count < end.upperBound + length {
          guard let chunk = readChunk() else { return nil }
          pending += chunk
        }
        let body = String(
          decoding: pending[end.upperBound..<(end.upperBound + length)], as: UTF8.self)
        pending.removeFirst(end.upperBound + length)
        return (status, headers, body)
      }
      guard let chunk = readChunk() else { return nil }
      pending += chunk
    }
  }
}

extension RawClient {
  /// Reads the head of a response: (status, headers with lowercased names); nil if the
  /// connection closed first. The body stays buffered.
  func readHead() -> (status: Int, headers: [String: String])? {
    guard let end = readUntil([13, 10, 13, 10]) else { return nil }
    return Self.parseHead(String(decoding: take(end)[..<(end - 4)], as: UTF8.self))
  }

  /// A response head without its blank line: the status, and the headers with lowercased
  /// names; nil if the status line is not one.
  fileprivate static func parseHead(_ text: String) -> (status: Int, headers: [String: String])? {
    var lines = text.components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst().split(separator: " ")
    guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
    var headers: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
        .trimmingCharacters(in: .whitespaces)
    }
    return (status, headers)
  }

  /// Reads one chunk of a chunked body: its bytes, empty for the last chunk (whose closing
  /// line is read too); nil if the connection closed first or the framing is wrong.
  func readBodyChunk() -> [UInt8]? {
    guard let lineEnd = readUntil([13, 10]) else { return nil }
    let sizeLine = String(decoding: take(lineEnd).dropLast(2), as: UTF8.self)
    guard let size = Int(sizeLine, radix: 16) else { return nil }
    guard fill(size + 2) else { return nil }
    let chunk = take(size + 2)
    guard chunk.suffix(2) == [13, 10] else { return nil }
    return Array(chunk.dropLast(2))
  }

  /// Reads exactly `count` bytes of an unframed body; nil if the connection closed first.
  func readBytes(_ count: Int) -> [UInt8]? {
    fill(count) ? take(count) : nil
  }
}

/// Writes `request` to a fresh connection and reads until the server closes it.
func rawExchange(port: Int, _ request: String) throws -> String {
  let client = try RawClient(port: port)
  client.send(request)
  return client.readToEnd()
}

private func systemSend(_ fd: Int32, _ base: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int
{
  send(fd, base, count, flags)
}
