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
package final class ChildProcess: @unchecked Sendable {
  // @unchecked Sendable: the mutable fields are only touched with `condition` locked; the
  // reader threads and the termination handler go through it.
  private let process = Process()
  private let condition = NSCondition()
  private var lines: [String] = []
  private var partial = Data()
  private var stdoutClosed = false
  private var errorBytes = Data()
  private var stderrClosed = false
  private var exited = false

  /// Starts `executable` with `arguments` and exactly `environment`.
  package init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    process.terminationHandler = { [condition] _ in
      condition.withLock {
        self.exited = true
        condition.broadcast()
      }
    }
    try process.run()
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

  deinit { stop() }

  private func received(_ data: Data) {
    condition.withLock {
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

  /// Every line of standard output so far, including the ones `nextLine` returned.
  package var output: [String] { condition.withLock { lines } }

  /// What the process wrote to standard error so far.
  package var errorText: String {
    condition.withLock { String(decoding: errorBytes, as: UTF8.self) }
  }

  /// Sends the process `signal` (SIGTERM, SIGINT).
  package func send(_ signal: Int32) {
    if process.isRunning { kill(process.processIdentifier, signal) }
  }

  /// Kills the process if it still runs and waits (bounded) for it to end.
  package func stop() {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
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
