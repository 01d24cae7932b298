import Foundation

/// The `Content-Type` of a served file, by its extension, in the two conventions the package
/// serves files by: one table, so that a new type is added to both at once.
enum FileContentType {
  /// Whose convention the answer follows.
  enum Convention {
    /// ``URLSessionMock/serveDirectory(_:at:fileID:filePath:line:column:)``'s, for browsers
    /// and web views: text types carry their charset; an unknown extension is
    /// `application/octet-stream`.
    case browser
    /// WireMock 2.35.1's for the files of `__files/` (measured): no charsets, some older
    /// names; an unknown extension is `application/json`.
    case wireMock
  }

  /// The type of `file` in `convention`.
  static func of(_ file: URL, _ convention: Convention) -> String {
    let types = table[file.pathExtension.lowercased()]
    switch convention {
    case .browser: return types?.browser ?? "application/octet-stream"
    case .wireMock: return types?.wireMock ?? "application/json"
    }
  }

  /// Each extension's type for a browser and as WireMock sends it; `nil` where a convention
  /// gives its default.
  private static let table: [String: (browser: String?, wireMock: String?)] = [
    "html": ("text/html; charset=utf-8", "text/html"),
    "htm": ("text/html; charset=utf-8", "text/html"),
    "css": ("text/css; charset=utf-8", "text/css"),
    "js": ("text/javascript; charset=utf-8", "application/javascript"),
    "mjs": ("text/javascript; charset=utf-8", nil),
    "json": ("application/json", nil),
    "txt": ("text/plain; charset=utf-8", "text/plain"),
    "csv": (nil, "text/csv"),
    "xml": ("application/xml", "application/xml"),
    "pdf": ("application/pdf", "application/pdf"),
    "wasm": ("application/wasm", "application/wasm"),
    "woff": ("font/woff", "application/font-woff"),
    "woff2": ("font/woff2", "font/woff2"),
    "svg": ("image/svg+xml", "image/svg+xml"),
    "png": ("image/png", "image/png"),
    "jpg": ("image/jpeg", "image/jpeg"),
    "jpeg": ("image/jpeg", "image/jpeg"),
    "gif": ("image/gif", "image/gif"),
    "webp": ("image/webp", "image/webp"),
    "ico": ("image/x-icon", "image/x-icon"),
  ]
}
