/// Where in the test's source a call was made, so that a failure can point there.
struct CallSite: Sendable, CustomStringConvertible {
  let fileID: StaticString
  let filePath: StaticString
  let line: UInt
  let column: UInt

  init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
  }

  var description: String { "\(fileID):\(line)" }
}
