import Foundation

/// What a document is at its top level, found without parsing it all: HAR files run to
/// megabytes and are parsed once, by their own reader.
enum JSONShape: Equatable {
  case array
  case object(keys: Set<String>)
  case other

  init(sniffing data: Data) {
    var bytes = data[...]
    // A byte order mark, as some editors write.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    bytes = bytes.drop { Self.isSpace($0) }
    switch bytes.first {
    case UInt8(ascii: "["): self = .array
    case UInt8(ascii: "{"): self = .object(keys: Self.topLevelKeys(bytes.dropFirst()))
    default: self = .other
    }
  }

  /// Whether `byte` is JSON's white space (space, line feed, carriage return, tab).
  static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// The keys of the top-level object whose body starts `bytes`: strings met at depth zero
  /// right after `{` or `,`. Stops at the first thing it does not expect.
  private static func topLevelKeys(_ bytes: Data.SubSequence) -> Set<String> {
    var keys: Set<String> = []
    var depth = 0
    var expectKey = true
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        var end = bytes.index(after: index)
        var escaped = false
        var text: [UInt8] = []
        while end < bytes.endIndex {
          let next = bytes[end]
          if escaped {
            escaped = false
            text.append(next)
          } else if next == UInt8(ascii: "\\") {
            escaped = true
          } else if next == UInt8(ascii: "\"") {
            break
          } else {
            text.append(next)
          }
          end = bytes.index(after: end)
        }
        if depth == 0 && expectKey {
          let key = String(decoding: text, as: UTF8.self)
          // A HAR file is told by its "log" (almost always its first key): the rest, often
          // megabytes, need not be scanned.
          if key == "log" { return [key] }
          keys.insert(key)
        }
        expectKey = false
        index = end
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
        expectKey = false
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        if depth == 0 { return keys }
        depth -= 1
      case UInt8(ascii: ","):
        if depth == 0 { expectKey = true }
      default: break
      }
      if index < bytes.endIndex { index = bytes.index(after: index) }
    }
    return keys
  }
}
