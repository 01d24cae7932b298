import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A Python `http.server` on 127.0.0.1 that the test process starts, talks to and stops.
///
/// The handler script is the test resource `Fixtures/parity_server.py`. It binds an ephemeral
/// port and prints it on its first line of standard output, so no port is fixed. It ends when
/// ``stop()`` terminates it, when its standard input (a pipe held here) closes because the test
/// process went away, or after ten minutes at the latest.
///
/// A suite gets one server for all its tests with the ``Trait/pythonHTTPServer`` trait, and its
/// tests read it from ``current``.
final class PythonHTTPServer: @unchecked Sendable {
  // @unchecked Sendable: every property is a `let`; `Process` and `Pipe` are only used to
  // terminate the process and close the pipe, once, in `stop()`, behind `lock`.

  /// The server of the suite being run: set by the ``Trait/pythonHTTPServer`` trait for the
  /// duration of its suite, `nil` anywhere else. A task-local value, so no test sees another
  /// suite's server.
  @TaskLocal static var current: PythonHTTPServer?

  /// Where `python3` is, or `nil` when it is not on the `PATH`.
  static let python: URL? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
      let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("python3")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
  }()

  /// The handler script in the test bundle.
  static var script: URL? {
    Bundle.module.url(forResource: "parity_server", withExtension: "py", subdirectory: "Fixtures")
  }

  /// Whether a server can be started here: `python3` is on the `PATH` and the script exists.
  static var isAvailable: Bool { python != nil && script != nil }

  /// `http://127.0.0.1:<port>`.
  let baseURL: URL
  private let process: Process
  private let input: Pipe
  private let lock = NSLock()

  private init(baseURL: URL, process: Process, input: Pipe) {
    self.baseURL = baseURL
    self.process = process
    self.input = input
  }

  /// The URL of `path` (which starts with `/`) on this server.
  func url(_ path: String) -> URL {
    URL(string: baseURL.absoluteString + path)!
  }

  /// Starts the script and returns once it has printed its port.
  static func start() async throws -> PythonHTTPServer {
    guard let python, let script else { throw StartError("python3 or the script is missing") }
    let process = Process()
    process.executableURL = python
    process.arguments = ["-u", script.path]
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    // This process's end of the script's input must reach no other child (one another test
    // starts at the same moment would inherit it and keep it open): the script ends when the
    // last write end closes, and this one is closed when the test process ends, however it
    // ends. Nothing is ever written to it, so no write can raise SIGPIPE here.
    _ = fcntl(input.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let firstLine = await readFirstLine(of: output.fileHandleForReading)
    guard let port = firstLine.flatMap({ Int($0) }), (1...65535).contains(port) else {
      process.terminate()
      process.waitUntilExit()
      let stderr = String(
        decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      throw StartError(
        "parity_server.py printed \(firstLine.map { "\"\($0)\"" } ?? "nothing") instead of a "
          + "port; its standard error:\n\(stderr)")
    }
    return PythonHTTPServer(
      baseURL: URL(string: "http://127.0.0.1:\(port)")!, process: process, input: input)
  }

  /// Terminates the server process (by its own handle) and waits until it has exited.
  func stop() {
    lock.withLock {
      guard process.isRunning else { return }
      process.terminate()
      try? input.fileHandleForWriting.close()
      process.waitUntilExit()
    }
  }

  /// Reads `handle` on a thread of its own up to the first newline or the end of the stream.
  private static func readFirstLine(of handle: FileHandle) async -> String? {
    await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
      let reader = Thread {
        var bytes = Data()
        while !bytes.contains(UInt8(ascii: "\n")) {
          let chunk = handle.availableData
          if chunk.isEmpty { break }  // the end: the process exited
          bytes.append(chunk)
        }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first
        continuation.resume(returning: line.map(String.init))
      }
      reader.start()
    }
  }

  struct StartError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }
}

/// Starts one ``PythonHTTPServer`` for a whole suite, makes it ``PythonHTTPServer/current`` while
/// the suite runs, and stops it afterwards.
struct PythonHTTPServerTrait: SuiteTrait, TestScoping {
  func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    // Without python3 the suite's condition trait skips every test; start nothing.
    guard PythonHTTPServer.isAvailable else { return try await function() }
    let server = try await PythonHTTPServer.start()
    defer { server.stop() }
    try await PythonHTTPServer.$current.withValue(server) { try await function() }
  }
}

extension Trait where Self == PythonHTTPServerTrait {
  /// One Python server for the suite, started before its first test and stopped after its
  /// last; tests read it from ``PythonHTTPServer/current``.
  static var pythonHTTPServer: Self { Self() }
}
