import Foundation

/// The body files of a bundle folder: paths relative to the folder, read when the bundle is
/// loaded, and never outside the folder.
struct BundleFiles {
  let folder: URL?
  let source: String

  /// Whether `path` is a relative path that stays inside its folder on its own terms: not
  /// absolute, no `~`, and no `..` that climbs above the folder.
  static func isContained(_ path: String) -> Bool {
    if path.isEmpty || path.hasPrefix("/") || path.hasPrefix("~") || path.contains("\\")
      || path.contains("\0")
    {
      return false
    }
    var depth = 0
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
      if part == ".." {
        depth -= 1
        if depth < 0 { return false }
      } else if part != "." {
        depth += 1
      }
    }
    return depth > 0
  }

  /// The bytes of the file `path`, relative to the folder.
  func read(_ path: String, at cursor: JSONCursor) throws(MockBundleError) -> Data {
    guard let folder else {
      throw cursor.fail(
        "\"\(path)\" names a file, and this document was read without a folder; write the "
          + "body inline (text, json or base64)", kind: .unsupported)
    }
    guard Self.isContained(path) else {
      throw cursor.fail(
        "\"\(path)\" leads outside the bundle's folder; a body file must be a relative path "
          + "inside it", kind: .fileOutsideBundle)
    }
    let root = folder.standardizedFileURL.resolvingSymlinksInPath()
    let url = root.appendingPathComponent(path)
    // A symbolic link inside the folder may point out of it.
    let resolved = url.standardizedFileURL.resolvingSymlinksInPath()
    guard resolved.path.hasPrefix(root.path.hasSuffix("/") ? root.path : root.path + "/") else {
      throw cursor.fail(
        "\"\(path)\" resolves to \(resolved.path), outside the bundle's folder \(root.path) "
          + "(a symbolic link out of it?); bundles never read outside their folder",
        kind: .fileOutsideBundle)
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory),
      !isDirectory.boolValue
    else {
      throw cursor.fail(
        "the file \"\(path)\" does not exist; looked for \(url.path)", kind: .missingFile)
    }
    do {
      return try Data(contentsOf: resolved)
    } catch {
      throw cursor.fail(
        "the file \"\(path)\" could not be read (\(url.path)): \(error.localizedDescription)",
        kind: .missingFile)
    }
  }
}
