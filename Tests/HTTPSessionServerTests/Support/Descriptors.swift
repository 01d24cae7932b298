import Foundation

/// The sockets this process holds whose local TCP port is `port` (Linux: `/proc/self/fd` and
/// `/proc/net/tcp*`); nil where `/proc` is missing.
func openSockets(onPort port: Int) -> [String]? {
  let fdFolder = "/proc/self/fd"
  guard let entries = try? FileManager.default.contentsOfDirectory(atPath: fdFolder) else {
    return nil
  }
  var inodes: [String: String] = [:]  // inode -> fd
  for entry in entries {
    guard
      let target = try? FileManager.default.destinationOfSymbolicLink(
        atPath: "\(fdFolder)/\(entry)"),
      target.hasPrefix("socket:[")
    else { continue }
    inodes[String(target.dropFirst(8).dropLast())] = entry
  }
  let hexPort = String(format: "%04X", port)
  var found: [String] = []
  for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
    guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
    for line in text.split(separator: "\n").dropFirst() {
      let fields = line.split(separator: " ")
      guard fields.count > 9 else { continue }
      let local = fields[1]
      guard local.hasSuffix(":\(hexPort)"), let fd = inodes[String(fields[9])] else { continue }
      found.append("fd \(fd) (\(local))")
    }
  }
  return found
}

/// The number of descriptors open in this process, from `/proc/self/fd`; nil where it is
/// missing.
func openDescriptorCount() -> Int? {
  (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count
}
