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

extension TemporaryFolder {
  /// This process's scratch folder, `httpsessionkit-PID-scratch`, made on first use and
  /// removed when the process exits (or, if it dies, by the next test process, as a leftover).
  private static let scratchRoot: URL? = {
    leftoversRemoved
    let root = FileManager.default.temporaryDirectory.appendingPathComponent(
      "\(prefix)\(getpid())-scratch", isDirectory: true)
    guard
      (try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true))
        != nil
    else { return nil }
    atexit {
      let root = FileManager.default.temporaryDirectory.appendingPathComponent(
        "httpsessionkit-\(getpid())-scratch", isDirectory: true)
      try? FileManager.default.removeItem(at: root)
    }
    return root
  }()

  /// A new empty folder, `LABEL-UUID`, inside this process's scratch folder, for a fixture
  /// that hands out a URL rather than an owner: it is removed with the scratch folder when the
  /// test process exits, so a test run leaves nothing in the temporary directory.
  package static func scratch(_ label: String) throws -> URL {
    guard let root = scratchRoot else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: label])
    }
    let folder = root.appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }
}
