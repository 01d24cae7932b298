import Foundation

/// HAR 1.2 files as bundles.
///
/// A placeholder until the HAR reader and writer land: both throw ``MockBundleError`` with
/// ``MockBundleError/Kind/unsupported``.
enum HARFormat {
  /// Reads a HAR file's entries as a bundle.
  static func read(_ data: Data, source: String) throws -> MockBundle {
    throw MockBundleError(
      .unsupported, source: source, "reading HAR files is not built yet in this version")
  }

  /// Writes `bundle` as a HAR 1.2 document.
  static func write(_ bundle: MockBundle) throws -> Data {
    throw MockBundleError(
      .unsupported, source: "MockBundle", "writing HAR files is not built yet in this version")
  }
}
