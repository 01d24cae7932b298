import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The canned mocks: one answer for every request, in the forms the package began with
// (DHURLSessionStub's). Each is `URLSessionMock()` with one catch-all stub, `stub(.any, with:)`,
// so stubs added later answer before it.
extension URLSessionMock {
  /// Creates a mock that gives every request this answer, in DHURLSessionStub's form.
  ///
  /// With no error and no response, the answer is status 200 for the request's own URL. With an
  /// error, the response is `nil` unless one is given.
  ///
  /// `delay` is how long after `resume()` the answer arrives, on `clock`; `nil` (or zero)
  /// answers synchronously inside `resume()`. `clock` is real time (`ContinuousClock`) if `nil`.
  ///
  /// ```swift
  /// let clock = VirtualClock()
  /// let mock = URLSessionMock(data: body, response: nil, error: nil, delay: .seconds(30), clock: clock)
  /// ```
  public convenience init(
    data: Data?, response: URLResponse?, error: (any Error)?, delay: Duration? = nil,
    clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      answering: StubResponse(data: data, response: response, error: error), delay: delay,
      clock: clock, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Creates a mock that answers every request with this dictionary as JSON, or returns `nil`
  /// if `JSONSerialization` cannot encode it.
  ///
  /// With no response and no error, the answer is status 200 with
  /// `Content-Type: application/json`.
  public convenience init?(
    jsonDict: [String: Any], response: URLResponse? = nil, error: (any Error)? = nil,
    delay: Duration? = nil, clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) {
    guard JSONSerialization.isValidJSONObject(jsonDict),
      let body = try? JSONSerialization.data(withJSONObject: jsonDict, options: [.sortedKeys])
    else { return nil }
    let answer =
      response == nil && error == nil
      ? StubResponse.data(body, headers: ["Content-Type": "application/json"])
      : StubResponse(data: body, response: response, error: error)
    self.init(
      answering: answer, delay: delay, clock: clock, fileID: fileID, filePath: filePath,
      line: line, column: column)
  }

  /// Creates a mock that answers every request with `value` encoded as JSON.
  public convenience init(
    json value: some Encodable & Sendable, status: Int = 200, headers: [String: String] = [:],
    delay: Duration? = nil, clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      answering: .json(value, status: status, headers: headers), delay: delay, clock: clock,
      fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Creates a mock that answers every request with status `status` and an empty body.
  public convenience init(
    status: Int, headers: [String: String] = [:], delay: Duration? = nil,
    clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(
      answering: .status(status, headers: headers), delay: delay, clock: clock, fileID: fileID,
      filePath: filePath, line: line, column: column)
  }

  /// Creates a mock that fails every request with the transport error `error`.
  public convenience init(
    error: any Error, delay: Duration? = nil, clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) {
    self.init(
      answering: .error(error), delay: delay, clock: clock, fileID: fileID, filePath: filePath,
      line: line, column: column)
  }

  /// Creates a mock whose one catch-all stub gives `answer`.
  private convenience init(
    answering answer: StubResponse, delay: Duration?, clock: (any Clock<Duration>)?,
    fileID: StaticString, filePath: StaticString, line: UInt, column: UInt
  ) {
    self.init(
      clock: clock, fileID: fileID, filePath: filePath, line: line,
      column: column)
    stub(
      .any, with: delay.map { answer.delayed(by: $0) } ?? answer, fileID: fileID,
      filePath: filePath, line: line, column: column)
  }
}
