import Foundation

/// Splits bytes that arrive in pieces into lines ended by LF, CR or CRLF, wherever the pieces
/// break: a CR that ends one piece and an LF that starts the next are one line end.
///
/// Lines are split on bytes, before decoding: CR and LF never occur inside a UTF-8 sequence,
/// so a character split across pieces is whole again in its line.
package struct LineSplitter: Sendable {
  private var partial: [UInt8] = []
  /// Whether the last byte seen was a CR that ended a line, so that an LF first in the next
  /// piece belongs to it.
  private var afterCR = false

  package init() {}

  /// Adds `bytes` and returns the lines they complete, without their line ends.
  package mutating func split(_ bytes: some Sequence<UInt8>) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    for byte in bytes {
      if afterCR {
        afterCR = false
        if byte == UInt8(ascii: "\n") { continue }
      }
      switch byte {
      case UInt8(ascii: "\n"):
        lines.append(partial)
        partial.removeAll(keepingCapacity: true)
      case UInt8(ascii: "\r"):
        lines.append(partial)
        partial.removeAll(keepingCapacity: true)
        afterCR = true
      default:
        partial.append(byte)
      }
    }
    return lines
  }

  /// The bytes after the last line end, or `nil` when there are none: the last line of a
  /// stream that does not end with a line end.
  package mutating func finish() -> [UInt8]? {
    defer {
      partial = []
      afterCR = false
    }
    return partial.isEmpty ? nil : partial
  }
}
