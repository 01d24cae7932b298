/// Where in the test's source a call was made, so that a failure can point there.
package struct CallSite: Sendable, CustomStringConvertible {
  package let fileID: String
  package let filePath: String
  package let line: Int
  package let column: Int
  /// The path as XCTest wants it, when the site came from `#filePath`.
  package let staticFilePath: StaticString?

  package init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
    self.fileID = "\(fileID)"
    self.filePath = "\(filePath)"
    self.line = Int(line)
    self.column = Int(column)
    self.staticFilePath = filePath
  }

  package init(
    fileID: String, filePath: String, line: Int, column: Int, staticFilePath: StaticString? = nil
  ) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
    self.staticFilePath = staticFilePath
  }

  package var description: String { "\(fileID):\(line)" }
}
