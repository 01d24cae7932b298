import Foundation
import HTTPSessionKit

// The server-sent events parser and the line splitter that `HTTPByteStream.events` and
// `.lines` read bodies with.
//
// Input: the first byte picks where the rest is cut into pieces (its value is a stride; 0
// feeds the bytes whole); the rest is the body of a `text/event-stream`.

/// One input for libFuzzer: a stride and a body, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  guard count > 0 else { return 0 }
  let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
  let stride = Int(bytes[0])
  let body = Array(bytes.dropFirst())
  checkEvents(body, stride: stride)
  checkLines(body, stride: stride)
  return 0
}

/// `body` cut every `stride` bytes (whole when 0).
func pieces(_ body: [UInt8], stride: Int) -> [ArraySlice<UInt8>] {
  guard stride > 0 else { return [body[...]] }
  return Swift.stride(from: 0, to: body.count, by: stride).map {
    body[$0..<min($0 + stride, body.count)]
  }
}

/// However the body is cut, the same events, with the same last id; each event written back
/// as text parses to itself.
func checkEvents(_ body: [UInt8], stride: Int) {
  var whole = EventStreamParser()
  let expected = whole.parse(body)
  var cut = EventStreamParser()
  var found: [ServerSentEvent] = []
  for piece in pieces(body, stride: stride) { found += cut.parse(piece) }
  check(found == expected, "cutting every \(stride) bytes changed the events")
  check(cut.lastEventID == whole.lastEventID, "cutting changed the last event id")
  for event in expected {
    var again = EventStreamParser()
    let reparsed = again.parse(Array(event.eventStreamText.utf8))
    check(reparsed.count == 1, "\(event) written as text gave \(reparsed.count) events")
    let normalised = event.data.replacingOccurrences(of: "\r\n", with: "\n")
      .replacingOccurrences(of: "\r", with: "\n")
    check(reparsed.first?.data == normalised, "\(event) did not read back its data")
    check(reparsed.first?.event == event.event, "\(event) did not read back its type")
    check(reparsed.first?.retry == event.retry, "\(event) did not read back its retry")
  }
}

/// However the body is cut, the same lines; no line holds a line end, and the lines hold
/// every other byte.
func checkLines(_ body: [UInt8], stride: Int) {
  func lines(_ pieces: [ArraySlice<UInt8>]) -> [[UInt8]] {
    var splitter = LineSplitter()
    var found: [[UInt8]] = []
    for piece in pieces { found += splitter.split(piece) }
    if let last = splitter.finish() { found.append(last) }
    return found
  }
  let expected = lines([body[...]])
  check(lines(pieces(body, stride: stride)) == expected, "cutting changed the lines")
  let ends: Set<UInt8> = [UInt8(ascii: "\n"), UInt8(ascii: "\r")]
  check(!expected.joined().contains(where: ends.contains), "a line holds a line end")
  check(
    expected.joined().count == body.filter { !ends.contains($0) }.count,
    "the lines lost or gained bytes")
}
