import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes lines to standard output, in order, on a thread of its own, a batch at a time.
///
/// A connection's thread only appends its line to a buffer, under a lock, with no system call
/// (except for the first line after a quiet spell, which wakes the writer). The writer then
/// lets lines gather for up to ``interval`` (or ``batchBytes``) and writes them in one `write`,
/// so that under load the log costs a system call per batch rather than per request, and a
/// slow terminal or pipe never holds a connection. A reader that stops reading cannot make the
/// buffer grow without bound: beyond ``limit`` bytes, lines are dropped and counted, and the
/// count is said on standard error once the writer catches up.
final class LineWriter: @unchecked Sendable {
  // @unchecked Sendable: the mutable fields are only touched with `condition` locked.
  /// A condition, not only a lock: the writer thread sleeps on it until lines come or a batch
  /// is due, and `flush` waits on it for the thread to catch up.
  private let condition = NSCondition()
  private var pending: [UInt8] = []
  private var writing = false
  private var sleeping = false
  private var flushing = 0
  private var dropped = 0

  /// The most bytes waiting to be written.
  static let limit = 4 << 20
  /// How long the writer lets lines gather after the first.
  static let interval: TimeInterval = 0.01
  /// How many bytes end the gathering early.
  static let batchBytes = 64 << 10

  init() {
    let thread = Thread { [self] in run() }
    thread.name = "stub-server.log"
    thread.start()
  }

  /// Queues `line` and a newline.
  func append(_ line: String) {
    condition.withLock {
      guard pending.count < Self.limit else {
        dropped += 1
        return
      }
      pending.append(contentsOf: line.utf8)
      pending.append(UInt8(ascii: "\n"))
      if sleeping || pending.count >= Self.batchBytes { condition.signal() }
    }
  }

  /// Waits until every queued line is written, for up to `timeout` seconds (a reader that
  /// stopped reading must not keep the command from exiting).
  func flush(timeout: TimeInterval = 2) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    condition.withLock {
      flushing += 1
      defer { flushing -= 1 }
      condition.broadcast()
      while !pending.isEmpty || writing {
        if !condition.wait(until: deadline) { return }
      }
    }
  }

  private func run() {
    while true {
      let (bytes, lost) = condition.withLock { () -> ([UInt8], Int) in
        while pending.isEmpty {
          sleeping = true
          condition.wait()
          sleeping = false
        }
        let gathered = Date(timeIntervalSinceNow: Self.interval)
        while flushing == 0, pending.count < Self.batchBytes {
          if !condition.wait(until: gathered) { break }
        }
        writing = true
        defer {
          pending = []
          dropped = 0
        }
        return (pending, dropped)
      }
      Self.write(bytes, to: 1)
      if lost > 0 {
        Self.write(
          Array(
            "stub-server: \(lost) log lines dropped: standard output was not read fast enough\n"
              .utf8), to: 2)
      }
      condition.withLock {
        writing = false
        condition.broadcast()
      }
    }
  }

  /// Writes every byte of `bytes` to `descriptor`, or stops at the first error.
  private static func write(_ bytes: [UInt8], to descriptor: Int32) {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes {
        systemWrite(descriptor, $0.baseAddress, $0.count)
      }
      if written < 0 {
        if errno == EINTR { continue }
        return
      }
      offset += written
    }
  }
}

// The unqualified name collides with the method above.
private func systemWrite(_ fd: Int32, _ base: UnsafeRawPointer?, _ count: Int) -> Int {
  write(fd, base, count)
}
