import Foundation
import HTTPSessionServer
import Testing

@Suite struct HTTPRequestParserTests {
  @Test func placeholder() { #expect(Bool(true)) }
}
