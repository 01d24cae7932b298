import Foundation

/// A file being read: its name, its bytes as UTF-8 (to turn an offset into a line and column)
/// and its rule for duplicate keys.
final class JSONText: Sendable {
  let source: String
  let data: Data
  let duplicates: DuplicateKeys

  init(_ data: Data, source: String, duplicates: DuplicateKeys) {
    self.data = data
    self.source = source
    self.duplicates = duplicates
  }

  /// `data` as UTF-8: itself, or its text re-encoded when it is UTF-16 or UTF-32, which JSON
  /// files may be (RFC 4627) and `JSONSerialization` reads. The encoding is told as
  /// `JSONSerialization` tells it: by a byte order mark, or by where the first characters
  /// (ASCII in any JSON document) have their zero bytes.
  static func utf8(_ data: Data) -> Data {
    let head = Array(data.prefix(4))
    func at(_ index: Int) -> UInt8? { index < head.count ? head[index] : nil }
    let encoding: String.Encoding
    var mark = 0
    switch (at(0), at(1), at(2), at(3)) {
    case (0x00, 0x00, 0xFE, 0xFF):
      (encoding, mark) = (.utf32BigEndian, 4)
    case (0xFF, 0xFE, 0x00, 0x00):
      (encoding, mark) = (.utf32LittleEndian, 4)
    case (0xFE, 0xFF, _, _):
      (encoding, mark) = (.utf16BigEndian, 2)
    case (0xFF, 0xFE, _, _):
      (encoding, mark) = (.utf16LittleEndian, 2)
    case (0x00, 0x00, 0x00, .some(let byte)) where byte != 0:
      encoding = .utf32BigEndian
    case (.some(let byte), 0x00, 0x00, 0x00) where byte != 0:
      encoding = .utf32LittleEndian
    case (0x00, .some(let byte), _, _) where byte != 0:
      encoding = .utf16BigEndian
    case (.some(let byte), 0x00, _, _) where byte != 0:
      encoding = .utf16LittleEndian
    default:
      return data
    }
    guard let text = String(data: data.dropFirst(mark), encoding: encoding) else { return data }
    return Data(text.utf8)
  }

  /// Reads `data` (re-encoded as ``utf8(_:)`` does) piece by piece with `read`, which walks a
  /// parser over it: for readers that turn a large document into values one at a time (HAR
  /// entries, admin mappings) instead of parsing it whole. A syntax error becomes a
  /// malformed-document error at its line and column; a ``MockBundleError`` passes through.
  static func read<Value>(
    _ data: Data, source: String, duplicates: DuplicateKeys,
    dialect: JSONParser.Dialect = .standard,
    _ read: (inout JSONParser, JSONText) throws -> Value
  ) throws(MockBundleError) -> Value {
    let utf8 = Self.utf8(data)
    let text = JSONText(utf8, source: source, duplicates: duplicates)
    let outcome: Result<Value, MockBundleError> = utf8.withUnsafeBytes { raw in
      var parser = JSONParser(raw.bindMemory(to: UInt8.self))
      parser.dialect = dialect
      do {
        return .success(try read(&parser, text))
      } catch let error as JSONSyntaxError {
        return .failure(text.error(error))
      } catch let error as MockBundleError {
        return .failure(error)
      } catch {
        return .failure(MockBundleError(.malformed, source: source, "\(error)"))
      }
    }
    return try outcome.get()
  }

  /// The line and column of byte `offset`.
  func location(of offset: Int) -> (line: Int, column: Int) {
    data.withUnsafeBytes { raw in
      JSONParser.location(of: offset, in: raw.bindMemory(to: UInt8.self))
    }
  }

  /// The error for a syntax error in this file: `file:3:7: Unexpected end of file ...`.
  func error(_ syntax: JSONSyntaxError) -> MockBundleError {
    let (line, column) = location(of: syntax.offset)
    return MockBundleError(
      .malformed, source: source, line: line, column: column, "not valid JSON: \(syntax.reason)")
  }
}
