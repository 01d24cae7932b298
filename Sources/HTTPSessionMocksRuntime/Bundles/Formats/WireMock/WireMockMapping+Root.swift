import Foundation

// What the admin API of a server started on a WireMock root asks the format: the root's
// mappings with their ids, so that `GET /__admin/mappings` lists them and a reset goes back
// to them.
extension WireMockMapping {
  /// Whether `folder` is a WireMock root: a folder holding `mappings/`.
  package static func isRoot(_ folder: URL) -> Bool { WireMockFormat.isRoot(folder) }

  /// The mappings of the WireMock root `folder`, as `MockBundle(contentsOf:)` reads them (every
  /// `.json` file under `mappings/`, recursively, in path order, bodies from `__files/`), each
  /// with its id (made when the file has none) and name.
  ///
  /// - Throws: ``MockBundleError`` naming the file and the JSON path, as the bundle does.
  package static func mappings(inRoot folder: URL) throws -> [WireMockMapping] {
    try WireMockFormat.mappings(inRoot: folder)
  }

  /// The mappings of the WireMock root `folder` that can be read, and the error of each file
  /// that cannot (the file, the JSON path and what is wrong), in path order: what
  /// `stub-server --skip-unreadable` serves and names.
  package static func readableMappings(inRoot folder: URL) throws -> (
    mappings: [WireMockMapping], skipped: [MockBundleError]
  ) {
    try WireMockFormat.mappings(inRoot: folder, skippingUnreadable: true)
  }
}

extension MockBundle {
  /// A bundle of `mappings`' entries, as a WireMock root loads them (the newest matching
  /// mapping of equal priority answers).
  package init(wireMockMappings mappings: [WireMockMapping]) {
    self.init(entries: mappings.map(\.entry), firstMatchWins: false)
  }
}
