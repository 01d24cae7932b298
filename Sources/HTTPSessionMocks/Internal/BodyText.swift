import Foundation

/// A body as it appears in messages: short text quoted, anything else by size.
struct BodyText: CustomStringConvertible {
  let data: Data
  init(_ data: Data) { self.data = data }

  /// Short text quoted in full; longer text cut to its first 120 bytes; anything that is not
  /// UTF-8 by its size. Only the first bytes are ever decoded, so a 100 MB body costs nothing.
  var description: String {
    if data.isEmpty { return "(empty)" }
    if data.count <= 200, let text = String(data: data, encoding: .utf8) {
      return "\"\(Self.oneLine(text))\""
    }
    // The cut may fall inside a UTF-8 character: try the few shorter cuts before calling it binary.
    for length in stride(from: 120, through: 117, by: -1) {
      if let text = String(data: data.prefix(length), encoding: .utf8) {
        return "\"\(Self.oneLine(text))…\" (\(data.count) bytes)"
      }
    }
    return "\(data.count) bytes of binary data"
  }

  /// Escapes line breaks and tabs, so that a multi-line body stays on the report's line.
  private static func oneLine(_ text: String) -> String {
    guard text.contains(where: { $0.isNewline || $0 == "\t" }) else { return text }
    return text.replacing("\r\n", with: "\\r\\n").replacing("\r", with: "\\r")
      .replacing("\n", with: "\\n").replacing("\t", with: "\\t")
  }
}

/// An error's description as one sentence ending in exactly one period.
func sentence(_ error: any Error) -> String {
  var text = String(describing: error)
  while text.hasSuffix(".") { text.removeLast() }
  return text + "."
}
