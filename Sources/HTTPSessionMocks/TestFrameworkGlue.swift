#if canImport(Testing)
  import Testing
#endif
#if canImport(XCTest)
  import XCTest
#endif

/// The test frameworks' side of the runtime's reports: the only type that calls into Swift
/// Testing and XCTest for a double.
///
/// `HTTPSessionMocksRuntime` finds this type by name at run time (`TestFrameworkLink`), so it
/// links neither framework itself; a test links it by importing `HTTPSessionMocks`.
package enum TestFrameworkGlue: TestFrameworkHooks {
  package static var isRunningSwiftTestingTest: Bool {
    #if canImport(Testing)
      return Test.current != nil
    #else
      return false
    #endif
  }

  package static func recordIssue(
    _ message: String, severity: CapturedReport.Severity, at site: CallSite
  ) -> Bool {
    #if canImport(Testing)
      let location = SourceLocation(
        fileID: site.fileID, filePath: site.filePath, line: site.line, column: site.column)
      switch severity {
      case .failure:
        Issue.record(Comment(rawValue: message), sourceLocation: location)
        return true
      case .warning:
        #if compiler(>=6.2)
          Issue.record(Comment(rawValue: message), severity: .warning, sourceLocation: location)
          return true
        #else
          return false
        #endif
      }
    #else
      return false
    #endif
  }

  package static func recordXCTestFailure(_ message: String, at site: CallSite) -> Bool {
    #if canImport(XCTest)
      if let file = site.staticFilePath {
        XCTFail(message, file: file, line: UInt(site.line))
      } else {
        XCTFail("\(site): \(message)")
      }
      return true
    #else
      return false
    #endif
  }
}
