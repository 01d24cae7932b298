import Foundation

/// Writes `JSONValue`s as the bundle files want them: pretty printed with sorted keys (a stable,
/// diff-friendly form), or compact with sorted keys (for bodies).
package enum JSONWriter {
  package static func pretty(_ value: JSONValue) -> Data {
    var out = Data()
    write(value, into: &out, indent: 0, pretty: true)
    out.append(UInt8(ascii: "\n"))
    return out
  }

  static func compact(_ value: JSONValue) -> Data {
    var out = Data()
    write(value, into: &out, indent: 0, pretty: false)
    return out
  }

  // Written as UTF-8 bytes straight into the result, never into a String first: a mapping with
  // a 30 MiB body is written once, not three times over (the text, its growth, its bytes).
  private static func write(_ value: JSONValue, into out: inout Data, indent: Int, pretty: Bool) {
    switch value {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
    case .integer(let number): out.append(contentsOf: String(number).utf8)
    case .double(let number): out.append(contentsOf: JSONNumber.text(number).utf8)
    case .string(let text): quote(text, into: &out)
    case .array(let values):
      guard !values.isEmpty else {
        out.append(contentsOf: "[]".utf8)
        return
      }
      out.append(UInt8(ascii: "["))
      for (index, element) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        newline(&out, indent + 1, pretty)
        write(element, into: &out, indent: indent + 1, pretty: pretty)
      }
      newline(&out, indent, pretty)
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      guard !members.isEmpty else {
        out.append(contentsOf: "{}".utf8)
        return
      }
      out.append(UInt8(ascii: "{"))
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        newline(&out, indent + 1, pretty)
        quote(key, into: &out)
        out.append(contentsOf: (pretty ? ": " : ":").utf8)
        write(members[key] ?? .null, into: &out, indent: indent + 1, pretty: pretty)
      }
      newline(&out, indent, pretty)
      out.append(UInt8(ascii: "}"))
    }
  }

  private static func newline(_ out: inout Data, _ indent: Int, _ pretty: Bool) {
    guard pretty else { return }
    out.append(UInt8(ascii: "\n"))
    out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
  }

  /// `text` as a JSON string, escaped as the `String` version below escapes it, appended
  /// as UTF-8: runs of bytes that need no escape are copied whole (no byte of a multi-byte
  /// character is below 0x80, so a byte scan finds every character to escape).
  static func quote(_ text: String, into out: inout Data) {
    out.append(UInt8(ascii: "\""))
    var text = text
    text.withUTF8 { bytes in
      var run = 0
      for index in 0..<bytes.count {
        let byte = bytes[index]
        guard byte == 0x22 || byte == 0x5C || byte < 0x20 || byte == 0x7F else { continue }
        out.append(UnsafeBufferPointer(rebasing: bytes[run..<index]))
        switch byte {
        case 0x22: out.append(contentsOf: "\\\"".utf8)
        case 0x5C: out.append(contentsOf: "\\\\".utf8)
        case 0x0A: out.append(contentsOf: "\\n".utf8)
        case 0x0D: out.append(contentsOf: "\\r".utf8)
        case 0x09: out.append(contentsOf: "\\t".utf8)
        default:
          let hex = String(byte, radix: 16)
          out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
        }
        run = index + 1
      }
      out.append(UnsafeBufferPointer(rebasing: bytes[run..<bytes.count]))
    }
    out.append(UInt8(ascii: "\""))
  }

  /// `text` as a JSON string, escaped as the `Data` version above escapes it, appended to
  /// `out`: as it is when no byte needs an escape (the common case), else through the bytes.
  static func quote(_ text: String, into out: inout String) {
    guard text.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 || $0 == 0x7F })
    else {
      out += "\""
      out += text
      out += "\""
      return
    }
    var bytes = Data()
    quote(text, into: &bytes)
    out += String(decoding: bytes, as: UTF8.self)
  }
}
