import Foundation

extension StubResponse {
  /// A broken answer, as WireMock's `fault` breaks it: what the client sees depends on the
  /// door the request came through.
  ///
  /// ```swift
  /// mock.stub(.get("/flaky"), with: .fault(.connectionResetByPeer))
  /// ```
  ///
  /// | Fault | Injected and URLProtocol bridge | Loopback server |
  /// | --- | --- | --- |
  /// | ``connectionResetByPeer`` | `URLError(.networkConnectionLost)` | a TCP reset (close with `SO_LINGER` 0) |
  /// | ``emptyResponse`` | `URLError(.badServerResponse)` | the connection closes without a byte |
  /// | ``malformedResponseChunk`` | `URLError(.cannotParseResponse)` | a `200` head with `Transfer-Encoding: chunked`, then bytes that are no chunk, then a close |
  /// | ``randomDataThenClose`` | `URLError(.cannotParseResponse)` | bytes that are no HTTP response, then a close |
  ///
  /// The server door writes the bytes WireMock 2.35 writes; what a real client then reports
  /// is its own. corelibs' `URLSession` on Linux reports `.networkConnectionLost`,
  /// `.badServerResponse`, `.unknown` and `.unsupportedURL` for the four (measured against
  /// WireMock 2.35.1 and against this server alike); the injected doors give the codes in the
  /// table, which say what happened.
  public enum Fault: String, Sendable, CaseIterable {
    /// WireMock's `CONNECTION_RESET_BY_PEER`.
    case connectionResetByPeer = "CONNECTION_RESET_BY_PEER"
    /// WireMock's `EMPTY_RESPONSE`.
    case emptyResponse = "EMPTY_RESPONSE"
    /// WireMock's `MALFORMED_RESPONSE_CHUNK`.
    case malformedResponseChunk = "MALFORMED_RESPONSE_CHUNK"
    /// WireMock's `RANDOM_DATA_THEN_CLOSE`.
    case randomDataThenClose = "RANDOM_DATA_THEN_CLOSE"

    /// The key of a `URLError`'s `userInfo` that names the fault it stands for, so that the
    /// loopback server can break the connection the fault's way.
    package static let userInfoKey = "HTTPSessionMocks.StubResponse.Fault"

    /// The error the injected door and the URLProtocol bridge deliver.
    public var error: URLError {
      let code: URLError.Code
      switch self {
      case .connectionResetByPeer: code = .networkConnectionLost
      case .emptyResponse: code = .badServerResponse
      case .malformedResponseChunk, .randomDataThenClose: code = .cannotParseResponse
      }
      return URLError(code, userInfo: [Self.userInfoKey: rawValue])
    }

    /// The fault `error` stands for, if it is one.
    package init?(_ error: any Error) {
      guard let urlError = error as? URLError,
        let name = urlError.userInfo[Self.userInfoKey] as? String
      else { return nil }
      self.init(rawValue: name)
    }
  }

  /// An answer broken as `fault` says: see ``Fault`` for what each door does.
  public static func fault(_ fault: Fault) -> StubResponse {
    .error(fault.error)
  }
}
