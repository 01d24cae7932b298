extension MockBundle {
  /// The file formats a bundle writes with ``MockBundle/write(to:format:)``.
  ///
  /// Reading needs no format: ``MockBundle/init(contentsOf:)`` tells them by their content.
  public enum FileFormat: Sendable, Equatable {
    /// This package's own format (see <doc:BundleFileFormat>): `bundle.json`.
    case bundle
    /// WireMock's root folder (see <doc:WireMockFormat>): `mappings/` and `__files/`.
    case wireMock
  }
}
