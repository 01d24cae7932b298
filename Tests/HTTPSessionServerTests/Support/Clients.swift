import Foundation
import HTTPSessionMocks
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A real URLSession that talks to sockets, with no cache and a safety timeout.
///
/// The timeout is URL loading's idle timer, and many of these requests stay idle until the test
/// itself acts: it advances the clock that releases the next event, or sends the request that
/// an admin wait is waiting for. Under the thread sanitizer, with every suite at once on two
/// cores, a test's task can wait its turn on the cooperative pool for longer than 10 s (one
/// run timed out three such requests at 10 s), so the timer allows 60 s, URLSession's default.
func liveSession() -> URLSession {
  let configuration = URLSessionConfiguration.ephemeral
  configuration.timeoutIntervalForRequest = 60
  return URLSession(configuration: configuration)
}

func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// The path of an installed program, or nil.
func installed(_ program: String) -> String? {
  let directories =
    ["/usr/bin", "/bin", "/usr/local/bin", "/opt/homebrew/bin"]
    + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
  return directories.map { "\($0)/\(program)" }
    .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Runs a program to its end (killed after `timeout` seconds, and when this process ends
/// first it is the child's only reader) and returns its standard output. It waits on a thread
/// of its own, so that the test holds none of Swift's cooperative threads meanwhile.
func run(_ path: String, _ arguments: [String], timeout: TimeInterval = 120) async throws
  -> String
{
  let child = try ChildProcess(
    URL(fileURLWithPath: path), arguments, environment: ProcessInfo.processInfo.environment)
  defer { child.stop() }
  _ = await child.exit(timeout: timeout)
  return child.outputText
}

struct User: Codable, Equatable, Sendable {
  let login: String
  let id: Int
}
