import Foundation
import Testing

@testable import HTTPSessionKit

/// The WHATWG event stream interpretation, case by case, and the same events however the
/// bytes are cut into pieces.
@Suite struct EventStreamParserTests {
  private func events(_ text: String) -> [ServerSentEvent] {
    var parser = EventStreamParser()
    return parser.parse(Array(text.utf8))
  }

  /// The events of `bytes` fed in pieces cut at every `cuts` offset.
  private func events(_ bytes: [UInt8], cutAt cuts: [Int]) -> [ServerSentEvent] {
    var parser = EventStreamParser()
    var found: [ServerSentEvent] = []
    var start = 0
    for cut in cuts.sorted() + [bytes.count] where cut >= start && cut <= bytes.count {
      found += parser.parse(bytes[start..<cut])
      start = cut
    }
    return found
  }

  @Test func fieldsMakeAnEventWhenABlankLineEndsIt() {
    #expect(
      events("id: 7\nevent: tick\ndata: one\nretry: 1500\n\n") == [
        ServerSentEvent(id: "7", event: "tick", data: "one", retry: .milliseconds(1500))
      ])
  }

  @Test func dataFieldsJoinWithNewlinesWithoutTheLastOne() {
    #expect(events("data: a\ndata:b\ndata\ndata:  c\n\n").map(\.data) == ["a\nb\n\n c"])
  }

  @Test func commentsAndUnknownFieldsAreSkipped() {
    #expect(events(": keep-alive\nfoo: bar\ndata: x\n:\n\n") == [ServerSentEvent(data: "x")])
  }

  @Test func aBlockWithoutDataDispatchesNothingAndResetsTheType() {
    #expect(events("event: a\n\ndata: x\n\n") == [ServerSentEvent(data: "x")])
    #expect(events("data\n\n") == [ServerSentEvent(data: "")])
  }

  @Test func anEventWithoutItsBlankLineIsDiscardedAtTheEnd() {
    #expect(events("data: one\n\ndata: two\n") == [ServerSentEvent(data: "one")])
  }

  @Test func crLfAndCrlfAllEndLines() {
    let expected = [ServerSentEvent(event: "e", data: "1\n2"), ServerSentEvent(data: "3")]
    #expect(events("event: e\rdata: 1\r\ndata: 2\n\r\ndata: 3\r\r") == expected)
  }

  @Test func aByteOrderMarkIsSkippedOnlyAtTheStart() {
    #expect(events("\u{FEFF}data: x\n\n") == [ServerSentEvent(data: "x")])
    // A second BOM is part of the field name, which is then unknown.
    #expect(events("\u{FEFF}\u{FEFF}data: x\n\n").isEmpty)
  }

  @Test func anEmptyEventTypeIsTheDefaultType() {
    #expect(events("event:\ndata: x\n\n") == [ServerSentEvent(data: "x")])
  }

  @Test func theLastEventIDCarriesOverAndAnIDWithNULIsIgnored() {
    var parser = EventStreamParser()
    let found = parser.parse(Array("id: 1\ndata: a\n\ndata: b\n\nid: x\u{0}y\ndata: c\n\n".utf8))
    #expect(found.map(\.id) == ["1", nil, nil])
    #expect(parser.lastEventID == "1")
    _ = parser.parse(Array("id\ndata: d\n\n".utf8))
    #expect(parser.lastEventID == "")
  }

  @Test func retryNeedsDigitsOnlyAndCarriesToTheNextEvent() {
    #expect(events("retry: 1.5\ndata: a\n\n") == [ServerSentEvent(data: "a")])
    #expect(events("retry: -1\ndata: a\n\n") == [ServerSentEvent(data: "a")])
    #expect(
      events("retry: 20\n\ndata: a\n\n") == [ServerSentEvent(data: "a", retry: .milliseconds(20))])
    #expect(
      events("retry: 99999999999999999999999\ndata: a\n\n").first?.retry
        == .milliseconds(Int64.max))
  }

  @Test func invalidUTF8BecomesTheReplacementCharacter() {
    var parser = EventStreamParser()
    let bytes: [UInt8] = Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8)
    #expect(parser.parse(bytes).map(\.data) == ["a\u{FFFD}b"])
  }

  @Test func anyCuttingOfTheBytesGivesTheSameEvents() {
    let text = "\u{FEFF}id: é1\r\nevent: tick\r\ndata: ünï\r\ndata: two\r\n\r\n: c\rdata: three\r\r"
    let bytes = Array(text.utf8)
    let whole = events(bytes, cutAt: [])
    #expect(whole.map(\.data) == ["ünï\ntwo", "three"])
    for first in 0...bytes.count {
      #expect(events(bytes, cutAt: [first]) == whole, "cut at \(first)")
    }
    #expect(events(bytes, cutAt: Array(0...bytes.count)) == whole, "one byte at a time")
  }

  @Test func anEventWrittenAsTextParsesBackToItself() {
    let originals = [
      ServerSentEvent(id: "1", event: "tick", data: "one"),
      ServerSentEvent(data: "two\nlines\r\nand\rmore"),
      ServerSentEvent(data: ""),
      ServerSentEvent(event: "x", data: " leading space", retry: .milliseconds(250)),
    ]
    let text = originals.map(\.eventStreamText).joined()
    let parsed = events(text)
    #expect(parsed.map(\.id) == ["1", nil, nil, nil])
    #expect(parsed.map(\.event) == ["tick", nil, nil, "x"])
    #expect(parsed.map(\.data) == ["one", "two\nlines\nand\nmore", "", " leading space"])
    #expect(parsed.last?.retry == .milliseconds(250))
    #expect(ServerSentEvent(id: "a\nb", data: "x").eventStreamText == "id: a b\ndata: x\n\n")
  }
}
