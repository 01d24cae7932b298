/// Where in the test's source a call was made, so that a failure can point there.
struct CallSite: Sendable, CustomStringConvertible {
  let fileID: String
  let filePath: String
  let line: Int
  let column: Int
  /// The path as XCTest wants it, when the site came from `#filePath`.
  let staticFilePath: StaticString?

  init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
    self.fileID = "\(fileID)"
    self.filePath = "\(filePath)"
    self.line = Int(line)
    self.column = Int(column)
    self.staticFilePath = filePath
  }

  init(
    fileID: String, filePath: String, line: Int, column: Int, staticFilePath: StaticString? = nil
  ) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
    self.staticFilePath = staticFilePath
  }

  var description: String { "\(fileID):\(line)" }
}
