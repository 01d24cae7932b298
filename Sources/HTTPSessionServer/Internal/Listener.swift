import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The listening socket, its accept thread, and every connection and thread it started.
///
/// ``stop()`` wakes the accept thread and every connection, then waits until all their threads
/// have returned, so that nothing calls into the mock after it returns.
final class Listener: @unchecked Sendable {
  // @unchecked Sendable: the mutable fields are only touched with `condition` locked.
  private let fd: Int32
  private let wake: WakeSignal
  private let limits: ServerLimits
  private let handler: any ExchangeHandler
  private let baseURL: String
  /// This server's element of the `Via` header, which every connection adds and looks for.
  private let hop = ViaHop()
  /// A condition, not only a lock: `stop()` waits on it until every connection thread has left.
  private let condition = NSCondition()
  private var connections: [ObjectIdentifier: Connection] = [:]
  private var threads = 0
  private var ourThreads: Set<ObjectIdentifier> = []
  private var stopping = false
  private var wakeClosed = false
  /// The descriptors the server holds open: the listener, its wake signal's two, and three per
  /// connection (the socket and its wake signal's two).
  private var descriptors = 3

  init(fd: Int32, limits: ServerLimits, handler: any ExchangeHandler, baseURL: String) throws {
    wake = try WakeSignal()
    self.fd = fd
    self.limits = limits
    self.handler = handler
    self.baseURL = baseURL
  }

  /// The number of connections open now.
  var connectionCount: Int { condition.withLock { connections.count } }

  /// The number of descriptors the server holds open now.
  var openDescriptorCount: Int { condition.withLock { descriptors } }

  func start() {
    condition.withLock { threads += 1 }
    spawn { self.acceptLoop() }
  }

  /// Stops accepting, closes every connection, and returns once every thread has returned.
  func stop() {
    var toStop: [Connection] = []
    condition.lock()
    if !stopping {
      stopping = true
      toStop = Array(connections.values)
      wake.wake()
    }
    condition.unlock()
    for connection in toStop { connection.stop() }
    condition.lock()
    // Called from one of our threads (a stub's closure stopping the server), it waits for the
    // others only.
    let own = ourThreads.contains(ObjectIdentifier(Thread.current)) ? 1 : 0
    while threads > own { condition.wait() }
    let closeWake = !wakeClosed && threads == 0
    if closeWake {
      wakeClosed = true
      descriptors -= 2
    }
    condition.unlock()
    if closeWake { wake.close() }
  }

  /// Runs `body` on a new thread; the caller has already counted it in `threads`.
  private func spawn(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread { [self] in
      condition.withLock { _ = ourThreads.insert(ObjectIdentifier(Thread.current)) }
      body()
      let closeWake = condition.withLock {
        ourThreads.remove(ObjectIdentifier(Thread.current))
        threads -= 1
        condition.broadcast()
        // The last thread of a server stopped from one of its own threads closes the signal.
        let last = stopping && threads == 0 && !wakeClosed
        if last {
          wakeClosed = true
          descriptors -= 2
        }
        return last
      }
      if closeWake { wake.close() }
    }
    thread.name = "HTTPSessionServer"
    thread.start()
  }

  private func acceptLoop() {
    defer {
      Socket.closeDescriptor(fd)
      condition.withLock { descriptors -= 1 }
    }
    while true {
      let ready = Socket.poll(
        [(fd, Int16(POLLIN)), (wake.readDescriptor, Int16(POLLIN))], timeout: -1)
      if ready[1] != 0 || condition.withLock({ stopping }) { return }
      guard ready[0] != 0 else { continue }
      accepting: while true {
        switch Socket.accept(fd) {
        case .accepted(let client):
          admit(client)
        case .none:
          break accepting
        case .exhausted:
          // Out of descriptors: back off briefly instead of spinning on the ready listener.
          _ = Socket.poll([(wake.readDescriptor, Int16(POLLIN))], timeout: 50)
          break accepting
        }
      }
    }
  }

  private func admit(_ client: Int32) {
    condition.lock()
    guard !stopping else {
      condition.unlock()
      Socket.closeDescriptor(client)
      return
    }
    guard connections.count < max(limits.maxConnections, 1) else {
      condition.unlock()
      refuse(client)
      return
    }
    guard
      let connection = try? Connection(
        fd: client, limits: limits, handler: handler, baseURL: baseURL, hop: hop)
    else {
      condition.unlock()
      Socket.closeDescriptor(client)
      return
    }
    let id = ObjectIdentifier(connection)
    connections[id] = connection
    threads += 1
    descriptors += 3
    condition.unlock()
    spawn { [self] in
      connection.run()
      condition.withLock {
        _ = connections.removeValue(forKey: id)
        descriptors -= 3
      }
    }
  }

  /// Answers a connection over ``ServerLimits/maxConnections`` with `503`, `Connection: close`
  /// and `Retry-After: 1`, and closes it, on the accept thread and without waiting: the answer
  /// fits in the new socket's empty send buffer. What the client has sent by then is read
  /// (a bounded amount) before the close, so that the close does not reset the connection
  /// before the client reads the answer.
  private func refuse(_ client: Int32) {
    let answer = ResponseEncoder.encodeText(
      status: 503,
      text: "The server has \(limits.maxConnections) connections open, its limit; try again.\n",
      request: nil, keepsAlive: false, extraFields: [("Retry-After", "1")])
    var sent = 0
    while sent < answer.count {
      let count = answer.withUnsafeBytes {
        Socket.send(client, UnsafeRawBufferPointer(rebasing: $0[sent...]))
      }
      guard count > 0 else { break }
      sent += count
    }
    Socket.shutdownWrite(client)
    var scratch = [UInt8](repeating: 0, count: 16 * 1024)
    for _ in 0..<4 {
      guard case .bytes = scratch.withUnsafeMutableBytes({ Socket.receive(client, into: $0) })
      else { break }
    }
    Socket.closeDescriptor(client)
  }
}
