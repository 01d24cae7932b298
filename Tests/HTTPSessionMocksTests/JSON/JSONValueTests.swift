import Foundation
import Testing

@testable import HTTPSessionMocksRuntime

/// `JSONValue`, the one value model of a JSON document: read by the package's parser for request
/// bodies, files and the admin API alike.
@Suite struct JSONValueTests {
  /// Each literal and the value `JSONDecoder` gave it when it read request bodies (measured on
  /// Swift 6.3.1's Foundation): a whole number is an integer however it is written.
  static let numbers: [(literal: String, value: String)] = [
    ("0", "0"), ("-0", "0"), ("-0.0", "0"), ("1.0", "1"), ("1e2", "100"), ("1E2", "100"),
    ("25.000", "25"), ("2.5e1", "25"), ("-1.0e+2", "-100"), ("1e0", "1"), ("1e-400", "0"),
    ("1.00000000000000000001", "1"), ("9007199254740993.0", "9007199254740993"),
    ("9223372036854775807", "9223372036854775807"),
    ("9223372036854775807.0", "9.223372036854776e+18"),
    ("-9223372036854775808", "-9223372036854775808"),
    ("9223372036854775808", "9.223372036854776e+18"), ("1.5", "1.5"), ("1e-7", "1e-07"),
    ("0.30000000000000004", "0.30000000000000004"), ("1.23e20", "1.23e+20"),
    ("3.141592653589793238462643383279", "3.141592653589793"), ("4.9e-324", "5e-324"),
  ]

  @Test(arguments: numbers)
  func numbersReadAsJSONDecoderReadThem(_ number: (literal: String, value: String)) throws {
    let value = try JSONValue(parsing: Data("[\(number.literal)]".utf8))
    #expect(value.description == "[\(number.value)]", "\(number.literal)")
  }

  @Test func aNumberBeyondADoubleIsNotJSON() {
    #expect(throws: MockBundleError.self) { try JSONValue(parsing: Data(#"{"a": 1e400}"#.utf8)) }
    #expect(JSONNumber.value("-1e400") == nil)
  }

  @Test func aBodyThatIsNotJSONSaysWhereItStops() throws {
    let body = Data("{\n  \"name\": tru\n}".utf8)
    let error = try #require(throws: MockBundleError.self) { try JSONValue(parsing: body) }
    #expect(error.line == 2)
    #expect(error.column == 14)
    #expect(error.problem.contains("expected true"), "\(error)")
  }

  /// As `JSONDecoder` read a body (the file readers choose their own rule).
  @Test func aKeyGivenTwiceKeepsItsFirstValue() throws {
    let value = try JSONValue(parsing: Data(#"{"a": 1, "b": {"c": 2, "c": 4}, "a": 3}"#.utf8))
    #expect(value == .object(["a": .integer(1), "b": .object(["c": .integer(2)])]))
  }

  @Test func aBodyInUTF16ReadsAsItsText() throws {
    let body = try #require(#"{"name": "Zoë"}"#.data(using: .utf16LittleEndian))
    #expect(try JSONValue(parsing: body) == .object(["name": .string("Zoë")]))
  }
}
