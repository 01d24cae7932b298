import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A fresh empty folder under the temporary directory; removed by `removeFolder(_:)`.
func makeTemporaryFolder() throws -> URL {
  let folder = FileManager.default.temporaryDirectory
    .appendingPathComponent("bundle-tests-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  return folder
}

/// Removes a folder made by `makeTemporaryFolder()`.
func removeFolder(_ folder: URL) {
  try? FileManager.default.removeItem(at: folder)
}

/// Writes `text` as UTF-8 to `name` inside `folder`, making the folders between.
@discardableResult
func writeFile(_ text: String, _ name: String, in folder: URL) throws -> URL {
  let target = folder.appendingPathComponent(name)
  try FileManager.default.createDirectory(
    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
  try Data(text.utf8).write(to: target)
  return target
}

/// The error `body` throws, as a `MockBundleError`; records an issue when it throws nothing or
/// something else.
func bundleError(
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> MockBundleError? {
  do {
    try body()
    Issue.record(
      "expected a MockBundleError, and nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as MockBundleError {
    return error
  } catch {
    Issue.record("expected a MockBundleError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

/// The UTF-8 of `text`, with each `<FF>` written as the byte 0xFF (which UTF-8 never holds):
/// files that are not UTF-8.
func bytesWithFF(_ text: String) -> Data {
  var data = Data()
  for (index, part) in text.components(separatedBy: "<FF>").enumerated() {
    if index > 0 { data.append(0xFF) }
    data.append(contentsOf: part.utf8)
  }
  return data
}

struct Account: Codable, Equatable, Sendable {
  var login: String
  var id: Int
}
