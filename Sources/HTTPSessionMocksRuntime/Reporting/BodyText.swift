import Foundation

/// A body as it appears in messages: JSON as JSON, other short text as a Swift string literal,
/// anything else by size.
struct BodyText: CustomStringConvertible {
  let data: Data
  init(_ data: Data) { self.data = data }

  /// Bodies larger than this are never parsed to find out whether they are JSON.
  private static let jsonCheckLimit = 64 * 1024

  /// A JSON object or array unquoted, on one line (`{"title":"Buy milk"}`); other text quoted with
  /// Swift's escapes (`"say \"hi\"\n"`). Text longer than 200 bytes is cut to its first 120; a
  /// body that is not UTF-8 is given by its size. Only the first bytes are ever decoded, and only
  /// bodies up to 64 KB are parsed as JSON, so a 100 MB body costs nothing.
  var description: String {
    if data.isEmpty { return "(empty)" }
    let json = Self.isJSON(data)
    if data.count <= 200, let text = String(data: data, encoding: .utf8) {
      return json ? Self.oneLineJSON(text) : text.debugDescription
    }
    // The cut may fall inside a UTF-8 character: try the few shorter cuts before calling it binary.
    for length in stride(from: 120, through: 117, by: -1) {
      if let text = String(data: data.prefix(length), encoding: .utf8) {
        let shown = json ? Self.oneLineJSON(text) + "…" : "\(text.debugDescription.dropLast())…\""
        return "\(shown) (\(data.count) bytes)"
      }
    }
    return "\(data.count) bytes of binary data"
  }

  /// Whether the body is a JSON object or array (a bare JSON string or number reads better quoted).
  private static func isJSON(_ data: Data) -> Bool {
    guard data.count <= jsonCheckLimit,
      let first = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }),
      first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    else { return false }
    return (try? JSONSerialization.jsonObject(with: data)) != nil
  }

  /// JSON keeps its own text; the line breaks and tabs it may hold (only ever white space between
  /// tokens) become single spaces, so that a pretty-printed body stays on the report's line.
  private static func oneLineJSON(_ text: String) -> String {
    guard text.contains(where: { $0.isNewline || $0 == "\t" }) else { return text }
    var result = ""
    var pendingSpace = false
    for character in text {
      if character.isNewline || character == "\t" {
        pendingSpace = true
        while result.last == " " { result.removeLast() }
      } else if pendingSpace && character == " " {
        continue
      } else {
        if pendingSpace && !result.isEmpty { result.append(" ") }
        pendingSpace = false
        result.append(character)
      }
    }
    return result
  }
}

/// An error's description as one sentence ending in exactly one period.
func sentence(_ error: any Error) -> String {
  var text = String(describing: error)
  while text.hasSuffix(".") { text.removeLast() }
  return text + "."
}
