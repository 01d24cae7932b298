import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Wakes a server thread that waits in `poll`, from any thread: the listener's accept thread
/// and each connection's thread wait on one, beside their socket.
///
/// The server runs inside the test process, so a wake must never raise SIGPIPE, not even when
/// the reading end was closed behind the server's back (a double `close` elsewhere in the
/// process closes whatever descriptor has that number now). A pipe has no flag for that, and
/// ignoring SIGPIPE would change the user's process; so the signal is a connected pair of local
/// stream sockets, written with `send` and `MSG_NOSIGNAL` (Linux) or on a socket with
/// `SO_NOSIGPIPE` (Darwin), which fails with `EPIPE` instead.
///
/// Package API for the package's own tests.
package struct WakeSignal: Sendable {
  /// The descriptor to wait on for `POLLIN`.
  package let readDescriptor: Int32
  /// The descriptor ``wake()`` writes to.
  package let writeDescriptor: Int32

  /// Opens the signal's two descriptors, non-blocking and close-on-exec.
  package init() throws {
    (readDescriptor, writeDescriptor) = try Socket.makePair()
  }

  /// Makes ``readDescriptor`` readable; returns `false` if that failed (the signal is full,
  /// which wakes the waiter already, or its reading end is gone).
  @discardableResult
  package func wake() -> Bool {
    let byte: [UInt8] = [1]
    return byte.withUnsafeBytes { Socket.send(writeDescriptor, $0) } == 1
  }

  /// Reads every pending wake, so that the next `poll` waits again.
  package func drain() {
    var bytes = [UInt8](repeating: 0, count: 64)
    while case .bytes = bytes.withUnsafeMutableBytes({ Socket.receive(readDescriptor, into: $0) }) {
    }
  }

  /// Closes both descriptors; the signal must not be used afterwards.
  package func close() {
    Socket.closeDescriptor(readDescriptor)
    Socket.closeDescriptor(writeDescriptor)
  }
}
