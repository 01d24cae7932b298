import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The real WireMock 2.35.1, started from its standalone jar on 127.0.0.1 as the reference the
/// WireMock tests compare this package against.
///
/// The jar ships inside the PyPI package `wiremock` 2.7.0 (the admin API's Python client),
/// which `Tests/fetch-wiremock` downloads and unpacks into `.build/wiremock` (`.ci/run` calls
/// it). ``jar`` is found there, or at `HTTPSESSIONKIT_WIREMOCK_JAR`; tests that need it are
/// skipped, saying so, when it or `java` is missing (``unavailableReason``).
///
/// The JVM runs under a small shell that ends it when the shell's standard input closes: when
/// ``stop()`` is called, when this object goes, or when the test process dies. A crashed test
/// run leaves no WireMock behind.
package final class RealWireMock: Sendable {
  /// `http://127.0.0.1:<port>`, the port WireMock picked.
  package let baseURL: URL
  /// The root folder it serves (`mappings/`, `__files/`).
  package let rootDirectory: URL
  private let child: ChildProcess

  /// The folder `Tests/fetch-wiremock` unpacks the PyPI package into: `.build/wiremock` in this
  /// package's root.
  package static let home: URL = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(".build/wiremock", isDirectory: true)
  }()

  /// The standalone jar: `HTTPSESSIONKIT_WIREMOCK_JAR` when set, else the one in ``home``;
  /// `nil` when neither exists.
  package static let jar: URL? = {
    let environment = ProcessInfo.processInfo.environment["HTTPSESSIONKIT_WIREMOCK_JAR"]
    let candidates =
      (environment.map { [URL(fileURLWithPath: $0)] } ?? [])
      + [home.appendingPathComponent("wiremock/server/wiremock-standalone-2.35.1.jar")]
    return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
  }()

  /// The folder to put on `PYTHONPATH` for `import wiremock` (the admin API's Python client,
  /// which needs `requests`): the one holding the jar's `wiremock/` package.
  package static var pythonPath: URL? {
    jar?.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  }

  /// Where `java` is, or `nil` when it is not on the `PATH`.
  package static let java: URL? = executableOnPath("java")

  /// Why WireMock cannot be started here, or `nil` when it can: for the note of a skipped test.
  package static var unavailableReason: String? {
    if java == nil {
      return "java is not installed (apt-get install openjdk-17-jre-headless)"
    }
    if jar == nil {
      return "the WireMock jar is missing: run Tests/fetch-wiremock, "
        + "or set HTTPSESSIONKIT_WIREMOCK_JAR"
    }
    return nil
  }

  /// Whether ``start(rootDirectory:arguments:)`` can work here.
  package static var isAvailable: Bool { unavailableReason == nil }

  /// Starts WireMock on a free loopback port, serving `rootDirectory`, with `arguments` added
  /// (`--verbose`, say), and returns once it listens. It blocks the calling thread until then:
  /// from an async test, use ``start(rootDirectory:arguments:)``.
  ///
  /// - Throws: ``StartError`` when it cannot be found or does not come up within a minute,
  ///   with what it printed.
  package init(rootDirectory: URL, arguments: [String] = []) throws {
    guard let java = Self.java, let jar = Self.jar else {
      throw StartError(Self.unavailableReason ?? "WireMock is unavailable")
    }
    // The shell starts the JVM, waits for its own input to end, then ends the JVM.
    let script =
      #"java="$1"; shift; "$java" "$@" </dev/null & pid=$!; "#
      + #"cat >/dev/null; kill $pid 2>/dev/null; wait $pid"#
    let child = try ChildProcess(
      URL(fileURLWithPath: "/bin/sh"),
      [
        "-c", script, "wiremock", java.path, "-jar", jar.path, "--port", "0",
        "--bind-address", "127.0.0.1", "--root-dir", rootDirectory.path,
      ] + arguments,
      environment: cleanEnvironment())
    // WireMock prints its options once it listens, the port it bound among them.
    var port: Int?
    let deadline = Date(timeIntervalSinceNow: 60)
    while port == nil, Date() < deadline, let line = child.nextLine(timeout: 60) {
      // "port:                         32899"
      if line.hasPrefix("port:") {
        port = Int(line.dropFirst("port:".count).trimmingCharacters(in: .whitespaces))
      }
    }
    guard let port, let url = URL(string: "http://127.0.0.1:\(port)") else {
      child.closeInput()
      _ = child.waitForExit(timeout: 10)
      child.stop()
      throw StartError(
        "WireMock did not report its port: \(child.outputText.suffix(2000)) \(child.errorText.suffix(2000))"
      )
    }
    self.baseURL = url
    self.rootDirectory = rootDirectory
    self.child = child
  }

  /// Starts WireMock as ``init(rootDirectory:arguments:)`` does, on a thread of its own: the
  /// JVM takes seconds to start (more on a loaded machine), and an async test that waited for
  /// it on one of Swift's few cooperative threads would hold back every other test's work.
  package static func start(rootDirectory: URL, arguments: [String] = []) async throws
    -> RealWireMock
  {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        continuation.resume(
          with: Result { try RealWireMock(rootDirectory: rootDirectory, arguments: arguments) })
      }
    }
  }

  deinit { stop() }

  /// The URL of `path` (which starts with `/`) on this WireMock.
  package func url(_ path: String) -> URL {
    URL(string: baseURL.absoluteString + path) ?? baseURL
  }

  /// What WireMock printed so far (its banner, and each request with `--verbose`).
  package var output: String { child.outputText + child.errorText }

  /// Ends WireMock and waits (bounded) for it to go.
  package func stop() {
    child.closeInput()
    if !child.waitForOutputToClose(timeout: 20) { child.stop() }
  }

  /// Why WireMock did not start.
  package struct StartError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
  }
}

/// `name` found in a folder of the `PATH`, or `nil`.
package func executableOnPath(_ name: String) -> URL? {
  let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
  for directory in path.split(separator: ":") {
    let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
    if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
  }
  return nil
}
