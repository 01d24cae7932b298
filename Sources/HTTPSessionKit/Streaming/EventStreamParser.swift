import Foundation

/// Parses a `text/event-stream` as the WHATWG HTML standard's event stream interpretation
/// says, piece by piece as it arrives.
///
/// - A UTF-8 byte order mark at the very start is skipped; invalid UTF-8 becomes U+FFFD.
/// - Lines end with CR, LF or CRLF, even when a CRLF is split across pieces.
/// - A line starting with `:` is a comment. Otherwise the field name runs up to the first
///   `:` (the whole line when there is none), and one space after the colon is dropped.
/// - `data` appends its value and a newline to the data; `event` sets the type; `id` sets the
///   last event id unless the value holds U+0000; `retry` sets the reconnection time when it
///   is ASCII digits only; any other field is ignored.
/// - A blank line dispatches the event, with the last newline of the data removed, unless the
///   data is empty: then the data and type are reset and nothing is dispatched.
/// - At the end of the stream, an event without its blank line is discarded.
package struct EventStreamParser: Sendable {
  private var lines = LineSplitter()
  private var startChecked = false
  private var bomCandidate: [UInt8] = []
  private var data = ""
  private var hasData = false
  private var type: String?
  private var idInBlock: String?
  private var retryInBlock: Duration?
  /// The last event id set, carried from event to event as `EventSource` does.
  package private(set) var lastEventID = ""

  package init() {}

  /// Adds `bytes` and returns the events they complete.
  package mutating func parse(_ bytes: some Collection<UInt8>) -> [ServerSentEvent] {
    var input = Array(bytes)
    if !startChecked {
      bomCandidate += input
      let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
      let prefix = Array(bom.prefix(bomCandidate.count))
      if bomCandidate.count < bom.count && bomCandidate == prefix { return [] }
      startChecked = true
      input = bomCandidate.starts(with: bom) ? Array(bomCandidate.dropFirst(3)) : bomCandidate
      bomCandidate = []
    }
    var events: [ServerSentEvent] = []
    for line in lines.split(input) {
      if let event = process(line) { events.append(event) }
    }
    return events
  }

  /// Ends the stream: a pending event without its blank line is discarded, as the standard
  /// says, and the parser starts over.
  package mutating func finish() {
    self = EventStreamParser()
  }

  private mutating func process(_ line: [UInt8]) -> ServerSentEvent? {
    if line.isEmpty { return dispatch() }
    if line.first == UInt8(ascii: ":") { return nil }
    let name: String
    var value: ArraySlice<UInt8>
    if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
      name = String(decoding: line[..<colon], as: UTF8.self)
      value = line[(colon + 1)...]
      if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
    } else {
      name = String(decoding: line, as: UTF8.self)
      value = []
    }
    switch name {
    case "event":
      type = String(decoding: value, as: UTF8.self)
    case "data":
      data += String(decoding: value, as: UTF8.self)
      data += "\n"
      hasData = true
    case "id":
      if !value.contains(0) {
        let id = String(decoding: value, as: UTF8.self)
        lastEventID = id
        idInBlock = id
      }
    case "retry":
      if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) {
        // Digits beyond what fits are clamped rather than trapping.
        var milliseconds: Int64 = 0
        for digit in value {
          let (times, overflowA) = milliseconds.multipliedReportingOverflow(by: 10)
          let (sum, overflowB) = times.addingReportingOverflow(Int64(digit - 0x30))
          if overflowA || overflowB {
            milliseconds = .max
            break
          }
          milliseconds = sum
        }
        retryInBlock = .milliseconds(milliseconds)
      }
    default:
      break
    }
    return nil
  }

  private mutating func dispatch() -> ServerSentEvent? {
    defer {
      data = ""
      hasData = false
      type = nil
      idInBlock = nil
    }
    guard hasData else { return nil }
    data.removeLast()
    let event = ServerSentEvent(
      id: idInBlock, event: type.flatMap { $0.isEmpty ? nil : $0 }, data: data,
      retry: retryInBlock)
    retryInBlock = nil
    return event
  }
}
