import Foundation
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The stub table's index: stubs that name one exact path, in code or in a WireMock mapping,
/// are found by it, and removing many at once is one pass.
@Suite struct StubTableTests {
  /// `count` WireMock mappings, `GET /items/N` each, as the admin API installs them.
  private func wireMockTable(_ count: Int, url key: String = "url") throws -> StubTable {
    var table = StubTable()
    for index in 0..<count {
      let json =
        #"{"request": {"method": "GET", "\#(key)": "/items/\#(index)"}, "response": {"status": 200}}"#
      let mapping = try WireMockMapping(json: Data(json.utf8), source: "test")
      _ = table.add(
        mapping.entry.matcher, responder: .sequence([.status(200)]),
        site: CallSite(fileID: #fileID, filePath: #filePath, line: #line, column: #column))
    }
    return table
  }

  private func tried(_ table: StubTable, _ url: String) throws -> [Int] {
    let request = URLRequest(url: try #require(URL(string: url)))
    var tried: [Int] = []
    let facts = table.registry.facts(for: request)
    let found: Int? = table.registry.firstCandidate(facts) { id -> Int? in
      tried.append(id)
      guard let definition = table.registry.definitions[id],
        StubTable.Registry.match(definition, facts) != nil
      else { return nil }
      return id
    }
    #expect(found != nil)
    return tried
  }

  @Test func aWireMockMappingWithAURLIsFoundByItsPathAmong1000() throws {
    let table = try wireMockTable(1000)
    // Before, every mapping was tried newest first: 1,000 tries for the oldest.
    #expect(try tried(table, "http://127.0.0.1:1/items/0") == [1])
    #expect(try tried(table, "http://127.0.0.1:1/items/999") == [1000])
  }

  @Test func aWireMockMappingWithAURLPathIsFoundByItsPathToo() throws {
    let table = try wireMockTable(100, url: "urlPath")
    #expect(try tried(table, "http://127.0.0.1:1/items/42") == [43])
  }

  @Test func aPathWithAnEscapeIsTriedForEveryRequestAndStillMatches() throws {
    var table = try wireMockTable(3)
    let json = #"{"request": {"url": "/a%20b"}, "response": {"status": 200}}"#
    let mapping = try WireMockMapping(json: Data(json.utf8), source: "test")
    #expect(mapping.entry.matcher.exactURLIndexPath == nil)
    _ = table.add(
      mapping.entry.matcher, responder: .sequence([.status(200)]),
      site: CallSite(fileID: #fileID, filePath: #filePath, line: #line, column: #column))
    #expect(try tried(table, "http://127.0.0.1:1/a%20b") == [4])
  }

  @Test func removingManyAtOnceLeavesTheOthersIndexed() throws {
    var table = try wireMockTable(10)
    let removed = table.registry.remove(Set([1, 2, 3, 10]))
    #expect(removed.map(\.id).sorted() == [1, 2, 3, 10])
    #expect(table.registry.definitions.count == 6)
    #expect(try tried(table, "http://127.0.0.1:1/items/4") == [5])
    let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/items/0")))
    let facts = table.registry.facts(for: request)
    let any: Int? = table.registry.firstCandidate(facts) { $0 }
    #expect(any == nil)
  }
}
