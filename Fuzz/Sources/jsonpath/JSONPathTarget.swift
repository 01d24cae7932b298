import Foundation

// The JSONPath evaluator behind WireMock's matchesJsonPath, on arbitrary expressions and
// documents.
//
// Input: line 1 is the expression; the rest is the document. Checked: parsing returns a path or
// a SyntaxError with a reason, never a crash; a path that reads writes the same source; a
// definite path selects at most one value; selecting from any document never traps; the value
// pattern built from the expression agrees with the path (a malformed expression is a problem
// and never matches).

/// One input for libFuzzer: an expression line and a document, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let newline = data.firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
  let expression = String(decoding: data[..<newline], as: UTF8.self)
  let body = newline < data.endIndex ? Data(data[data.index(after: newline)...]) : Data()
  let document = try? JSONValue(parsing: body)
  let pattern = ValuePattern.matchesJSONPath(expression)
  do {
    let path = try JSONPath(parsing: expression)
    check(path.source == expression, "the source changed")
    check(pattern.problems.isEmpty, "a path that parses is a problem: \(pattern.problems)")
    if let document {
      let selected = path.select(in: document)
      if path.isDefinite {
        check(selected.count <= 1, "a definite path selected \(selected.count)")
      }
      _ = ValuePattern.matchesJSONPath(expression, .equalTo("1")).matches(
        String(decoding: body, as: UTF8.self))
      for value in selected.prefix(4) { _ = ValuePattern.text(of: value) }
    }
  } catch {
    check(!error.reason.isEmpty, "a syntax error with no reason")
    check(pattern.problems.count == 1, "a path that does not parse is not a problem")
    check(!pattern.matches(String(decoding: body, as: UTF8.self)), "a malformed path matched")
  }
  _ = pattern.matches(String(decoding: body, as: UTF8.self))
  return 0
}
