import Foundation

/// Fresh files for download answers.
enum TemporaryFile {
  static func write(_ data: Data) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "HTTPSessionMocks-\(UUID().uuidString).tmp")
    try data.write(to: url)
    return url
  }
}
