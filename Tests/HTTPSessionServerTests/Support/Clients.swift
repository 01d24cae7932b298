import Foundation
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A real URLSession that talks to sockets, with no cache and a safety timeout.
func liveSession() -> URLSession {
  let configuration = URLSessionConfiguration.ephemeral
  configuration.timeoutIntervalForRequest = 10
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

/// Runs a program to its end and returns its standard output.
func run(_ path: String, _ arguments: [String]) throws -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  try process.run()
  let output = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return String(decoding: output, as: UTF8.self)
}

struct User: Codable, Equatable, Sendable {
  let login: String
  let id: Int
}
