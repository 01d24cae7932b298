import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Thin wrappers over the POSIX socket calls the server uses, with the platform differences in
/// one place: `MSG_NOSIGNAL` (Linux) or `SO_NOSIGPIPE` (Darwin) so that a closed peer never
/// raises SIGPIPE, `TCP_NODELAY` so that small responses are not held behind delayed ACKs, and
/// close-on-exec so that child processes (a test's `curl`) do not inherit server descriptors.
enum Socket {
  #if canImport(Glibc) || canImport(Musl)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    static let sendFlags = Int32(MSG_NOSIGNAL)
  #else
    static let streamType = SOCK_STREAM
    static let sendFlags: Int32 = 0
  #endif

  /// A resolved loopback address to bind.
  enum Address {
    case v4(in_addr)
    case v6(in6_addr)
  }

  /// Creates a non-blocking listening socket bound to `address` and `port` (0: ephemeral) and
  /// returns it with the port the kernel chose.
  static func listen(on address: Address, port: Int, backlog: Int32) throws -> (Int32, Int) {
    let family: Int32
    switch address {
    case .v4: family = AF_INET
    case .v6: family = AF_INET6
    }
    let fd = socket(family, streamType, 0)
    guard fd >= 0 else { throw ServerError.system("socket", errno) }
    prepare(fd)
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    let bound: Int32
    switch address {
    case .v4(let host):
      var address = sockaddr_in()
      #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
      #endif
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = in_port_t(UInt16(port).bigEndian)
      address.sin_addr = host
      bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    case .v6(let host):
      var only: Int32 = 1
      setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &only, socklen_t(MemoryLayout<Int32>.size))
      var address = sockaddr_in6()
      #if canImport(Darwin)
        address.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
      #endif
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = in_port_t(UInt16(port).bigEndian)
      address.sin6_addr = host
      bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    }
    guard bound == 0 else {
      let code = errno
      close(fd)
      throw ServerError.system("bind", code)
    }
    guard systemListen(fd, backlog) == 0 else {
      let code = errno
      close(fd)
      throw ServerError.system("listen", code)
    }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let named = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else {
      let code = errno
      close(fd)
      throw ServerError.system("getsockname", code)
    }
    let isV6 = Int32(storage.ss_family) == AF_INET6
    let chosen: UInt16 = withUnsafePointer(to: &storage) { pointer in
      if isV6 {
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          UInt16(bigEndian: $0.pointee.sin6_port)
        }
      }
      return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        UInt16(bigEndian: $0.pointee.sin_port)
      }
    }
    return (fd, Int(chosen))
  }

  /// What ``accept(_:)`` found.
  enum Accepted {
    /// A new connection, prepared for the server.
    case accepted(Int32)
    /// No connection is pending (or it went away before it was accepted).
    case none
    /// The process or system is out of descriptors.
    case exhausted
  }

  /// Accepts one pending connection.
  static func accept(_ listener: Int32) -> Accepted {
    let fd = systemAccept(listener, nil, nil)
    guard fd >= 0 else { return errno == EMFILE || errno == ENFILE ? .exhausted : .none }
    prepare(fd)
    var yes: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    return .accepted(fd)
  }

  /// Makes `fd` non-blocking and close-on-exec, and (on Darwin) free of SIGPIPE.
  static func prepare(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL, 0)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    #if canImport(Darwin)
      var yes: Int32 = 1
      setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
    #endif
  }

  /// A connected pair of local stream sockets, prepared like every other socket (written with
  /// ``send(_:_:)``, it never raises SIGPIPE): (one end, the other).
  static func makePair() throws -> (Int32, Int32) {
    var ends: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, streamType, 0, &ends) == 0 else {
      throw ServerError.system("socketpair", errno)
    }
    prepare(ends[0])
    prepare(ends[1])
    return (ends[0], ends[1])
  }

  /// Sends what it can without blocking: the count sent, 0 if the socket is full, -1 on error.
  static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
    let sent = systemSend(fd, base, bytes.count, sendFlags)
    if sent >= 0 { return sent }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1
  }

  /// What a non-blocking read found.
  enum Received {
    case bytes(Int)
    case wouldBlock
    case closed
  }

  static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Received {
    let count = recv(fd, buffer.baseAddress, buffer.count, 0)
    if count > 0 { return .bytes(count) }
    if count == 0 { return .closed }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .closed
  }

  /// Waits until one of `fds` is ready or `timeout` milliseconds pass (-1: no limit); returns
  /// the `revents` of each, all zero on a timeout.
  static func poll(_ fds: [(Int32, Int16)], timeout: Int32) -> [Int16] {
    var entries = fds.map { pollfd(fd: $0.0, events: $0.1, revents: 0) }
    let count = entries.withUnsafeMutableBufferPointer {
      systemPoll($0.baseAddress, nfds_t($0.count), timeout)
    }
    guard count > 0 else { return entries.map { _ in 0 } }
    return entries.map(\.revents)
  }

  static func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
  }

  static func shutdownWrite(_ fd: Int32) {
    _ = shutdown(fd, Int32(SHUT_WR))
  }
}

// The unqualified names collide with the wrappers above.
private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
private func systemAccept(
  _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?,
  _ length: UnsafeMutablePointer<socklen_t>?
) -> Int32 { accept(fd, address, length) }
private func systemSend(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int
{ send(fd, base, count, flags) }
private func systemPoll(_ fds: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32)
  -> Int32
{ poll(fds, count, timeout) }
