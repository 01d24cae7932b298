import Foundation

/// Where a bundle writer puts a body's bytes: the rule our format's writer and WireMock's
/// share, each naming the three places its own way (`file`/`text`/`base64`,
/// `bodyFileName`/`body`/`base64Body`).
enum BodyPlacement: Equatable {
  /// A file of the folder being written, at this path relative to the folder's body files.
  case file(String)
  /// The body as text, in the document.
  case text(String)
  /// The body's bytes in base64, in the document (bytes that are not text, outside a folder).
  case base64(String)

  /// Places `data`: written into a folder, a body that came from a file (`name`) or is not
  /// text goes to a file: `name` when it is a path inside the folder, else `stem.bin`; a path
  /// that already holds other bytes becomes `stem-` plus its last component. `files` gets the
  /// file's bytes. Anything else is text, or base64 when it is not text.
  static func place(
    _ data: Data, name: String?, intoFolder: Bool, stem: String, files: inout [String: Data]
  ) -> BodyPlacement {
    let text = BodyCoding.text(of: data)
    if intoFolder && (name != nil || text == nil) {
      var path = name.flatMap { BundleFiles.isContained($0) ? $0 : nil } ?? "\(stem).bin"
      if let existing = files[path], existing != data {
        path = "\(stem)-" + (path as NSString).lastPathComponent
      }
      files[path] = data
      return .file(path)
    }
    if let text { return .text(text) }
    return .base64(data.base64EncodedString())
  }
}
