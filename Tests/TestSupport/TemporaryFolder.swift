import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A new folder under the temporary directory for one test, removed when the value is released.
///
/// A test that dies with its process (killed, crashed) runs no `defer`, so the folder is named
/// for the process that made it, `httpsessionkit-PID-LABEL-UUID`; the first folder a test
/// process makes also removes those of processes that no longer run.
package final class TemporaryFolder: Sendable {
  /// The folder.
  package let url: URL

  private static let prefix = "httpsessionkit-"

  /// Removes, once per process, the folders of test processes that have ended.
  private static let leftoversRemoved: Void = {
    let root = FileManager.default.temporaryDirectory
    let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
    for name in names where name.hasPrefix(prefix) {
      let pid = name.dropFirst(prefix.count).prefix { $0.isNumber }
      guard let number = pid_t(pid), number > 0, kill(number, 0) != 0, errno == ESRCH else {
        continue
      }
      try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
    }
  }()

  /// Creates `httpsessionkit-PID-LABEL-UUID` under the temporary directory.
  package init(_ label: String) throws {
    Self.leftoversRemoved
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "\(Self.prefix)\(getpid())-\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// The URL of `name` inside the folder.
  package func appendingPathComponent(_ name: String, isDirectory: Bool = false) -> URL {
    url.appendingPathComponent(name, isDirectory: isDirectory)
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}
