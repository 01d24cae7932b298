import Foundation
import Testing

@testable import HTTPSessionMocksRuntime

/// The one table of served files' types, read in both conventions.
@Suite struct FileContentTypeTests {
  private func type(_ name: String, _ convention: FileContentType.Convention) -> String {
    FileContentType.of(URL(fileURLWithPath: "/root/" + name), convention)
  }

  @Test func aBrowserGetsTextWithItsCharsetAndUnknownFilesAsBytes() {
    #expect(type("index.HTML", .browser) == "text/html; charset=utf-8")
    #expect(type("app.mjs", .browser) == "text/javascript; charset=utf-8")
    #expect(type("font.woff", .browser) == "font/woff")
    #expect(type("data.csv", .browser) == "application/octet-stream")
    #expect(type("README", .browser) == "application/octet-stream")
  }

  /// WireMock 2.35.1's types, as measured against the real jar.
  @Test func wireMockSendsItsOwnNamesAndJSONForTheRest() {
    #expect(type("index.html", .wireMock) == "text/html")
    #expect(type("app.js", .wireMock) == "application/javascript")
    #expect(type("font.woff", .wireMock) == "application/font-woff")
    #expect(type("data.csv", .wireMock) == "text/csv")
    #expect(type("app.mjs", .wireMock) == "application/json")
    #expect(type("data.yaml", .wireMock) == "application/json")
  }
}
