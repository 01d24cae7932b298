import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// Shared by the test targets that start this package's executables (the TestSupport target).

/// A built executable of this package, found beside the test bundle (where `swift build` and
/// `swift test` put every product), or `nil` when it was not built.
package func builtExecutable(_ name: String) -> URL? {
  var folders: [URL] = []
  if let executable = Bundle.main.executableURL {
    folders.append(executable.deletingLastPathComponent())
  }
  for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
    folders.append(bundle.bundleURL.deletingLastPathComponent())
  }
  return folders.map { $0.appendingPathComponent(name) }
    .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// A child process whose standard output is read line by line as it comes, with every wait
/// bounded in real time; `stop()` (or deinit) kills it if it is still running.
///
/// Its standard input is a pipe that only this object holds open (close-on-exec, so no other
/// child inherits it): a child that watches its input, as `stub-server --exit-with-parent`
/// does, ends when ``closeInput()`` is called, when this object goes, or when the test process
/// dies, whichever comes first. The test never writes to it, so no write can raise SIGPIPE.
package final class ChildProcess: @unchecked Sendable {
  // @unchecked Sendable: the mutable fields are only touched with `condition` locked; the
  // reader threads and the termination handler go through it.
  private let process = Process()
  private let condition = NSCondition()
  private var lines: [String] = []
  private var partial = Data()
  private var outputBytes = Data()
  private var stdoutClosed = false
  private var errorBytes = Data()
  private var stderrClosed = false
  private var exited = false
  /// The write end of the child's standard input; -1 once closed.
  private var input: Int32 = -1

  /// Starts `executable` with `arguments` and exactly `environment`.
  package init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    let errors = Pipe()
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    // Close-on-exec on this process's descriptors, so that a child another test starts at the
    // same moment does not inherit them (an inherited write end would keep the output open,
    // or the input, after this child ends). The child's copies are made by dup2, without it.
    for fd in ends + [
      output.fileHandleForReading.fileDescriptor, output.fileHandleForWriting.fileDescriptor,
      errors.fileHandleForReading.fileDescriptor, errors.fileHandleForWriting.fileDescriptor,
    ] {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    let childInput = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
    input = ends[1]
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = childInput
    process.terminationHandler = { [condition] _ in
      condition.withLock {
        self.exited = true
        condition.broadcast()
      }
    }
    do {
      try process.run()
    } catch {
      close(ends[1])
      input = -1
      throw error
    }
    try? childInput.close()
    let out = output.fileHandleForReading
    let err = errors.fileHandleForReading
    Thread.detachNewThread { [self] in
      while case let data = out.availableData, !data.isEmpty { received(data) }
      condition.withLock {
        stdoutClosed = true
        condition.broadcast()
      }
    }
    Thread.detachNewThread { [self] in
      while case let data = err.availableData, !data.isEmpty {
        condition.withLock { errorBytes.append(data) }
      }
      condition.withLock {
        stderrClosed = true
        condition.broadcast()
      }
    }
  }

  deinit {
    stop()
    closeInput()
  }

  private func received(_ data: Data) {
    condition.withLock {
      outputBytes.append(data)
      partial.append(data)
      while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
        lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
        partial = Data(partial[(newline + 1)...])
      }
      condition.broadcast()
    }
  }

  private var consumed = 0

  /// The next line of standard output, or `nil` if none comes within `timeout` seconds (or
  /// the output ends).
  package func nextLine(timeout: TimeInterval = 30) -> String? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    return condition.withLock {
      while consumed >= lines.count, !stdoutClosed {
        if !condition.wait(until: deadline) { break }
      }
      guard consumed < lines.count else { return nil }
      consumed += 1
      return lines[consumed - 1]
    }
  }

  /// The next line of standard output, as ``nextLine(timeout:)`` gives it, waited for on a
  /// thread of its own, so that an async test does not hold one of Swift's cooperative threads
  /// while a child starts.
  package func line(timeout: TimeInterval = 30) async -> String? {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: self.nextLine(timeout: timeout)) }
    }
  }

  /// Waits for the process to end and for both of its outputs to close; returns its exit
  /// status, or `nil` if it is still running after `timeout` seconds (or ended by a signal).
  package func waitForExit(timeout: TimeInterval = 30) -> Int32? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    let done = condition.withLock {
      while !(exited && stdoutClosed && stderrClosed) {
        if !condition.wait(until: deadline) { return false }
      }
      return true
    }
    guard done, process.terminationReason == .exit else { return nil }
    return process.terminationStatus
  }

  /// Waits for the process to end, as ``waitForExit(timeout:)`` does, on a thread of its own,
  /// so that an async test does not hold one of Swift's cooperative threads meanwhile.
  package func exit(timeout: TimeInterval = 30) async -> Int32? {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread { continuation.resume(returning: self.waitForExit(timeout: timeout)) }
    }
  }

  /// Waits until the child's standard output and standard error have closed: every process
  /// that held them (the child, and any child of its own it handed them to) has ended. Returns
  /// `false` if they are still open after `timeout` seconds.
  package func waitForOutputToClose(timeout: TimeInterval = 30) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    return condition.withLock {
      while !(stdoutClosed && stderrClosed) {
        if !condition.wait(until: deadline) { return false }
      }
      return true
    }
  }

  /// Closes the child's standard input: a child that reads it sees the end of the file.
  package func closeInput() {
    let fd = condition.withLock {
      defer { input = -1 }
      return input
    }
    if fd >= 0 { close(fd) }
  }

  /// Every line of standard output so far, including the ones `nextLine` returned.
  package var output: [String] { condition.withLock { lines } }

  /// What the process wrote to standard output so far, as text, a last line without its
  /// newline included.
  package var outputText: String {
    condition.withLock { String(decoding: outputBytes, as: UTF8.self) }
  }

  /// What the process wrote to standard error so far.
  package var errorText: String {
    condition.withLock { String(decoding: errorBytes, as: UTF8.self) }
  }

  /// Sends the process `signal` (SIGTERM, SIGINT).
  package func send(_ signal: Int32) {
    if process.isRunning { kill(process.processIdentifier, signal) }
  }

  /// Kills the process, and every process it started in its process group, and waits
  /// (bounded) for it to end.
  ///
  /// Foundation starts a child in a process group of its own, so the group is the child and
  /// its descendants alone. Killing the group matters for programs behind a shell wrapper that
  /// does not `exec` (Debian's `chromium-headless-shell` is one): killing the wrapper alone
  /// leaves the browser running, its pipes open, and the test waiting.
  package func stop() {
    let pid = process.processIdentifier
    if pid > 0, getpgid(pid) == pid { kill(-pid, SIGKILL) }
    guard process.isRunning else { return }
    kill(pid, SIGKILL)
    condition.withLock {
      let deadline = Date(timeIntervalSinceNow: 10)
      while !exited { if !condition.wait(until: deadline) { break } }
    }
  }
}

/// This process's environment without the variables that would steer a child: a bundle in
/// the launch environment, another API base URL.
package func cleanEnvironment() -> [String: String] {
  ProcessInfo.processInfo.environment.filter {
    !$0.key.hasPrefix("HTTPSESSIONKIT_") && $0.key != "API_BASE_URL"
  }
}
