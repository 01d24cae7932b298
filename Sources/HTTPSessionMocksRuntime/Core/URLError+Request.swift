import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLError {
  /// `URLError(code)` as URLSession makes them: the failing URL and its string in the user
  /// info, and a description.
  init(_ code: URLError.Code, for request: URLRequest, description: String? = nil) {
    var info: [String: Any] = [:]
    if let url = request.url {
      info[NSURLErrorFailingURLErrorKey] = url
      // The key URLSession fills in (its constant is deprecated in favour of the URL one).
      info["NSErrorFailingURLStringKey"] = url.absoluteString
    }
    if let description {
      info[NSLocalizedDescriptionKey] = description
      #if canImport(FoundationNetworking)
        // Corelibs' NSError prints its failure reason where Apple's prints the description, so
        // without it `"\(error)"` (and Swift Testing's "Caught error: ...") reads `"(null)"`.
        info[NSLocalizedFailureReasonErrorKey] = description
      #endif
    }
    self.init(code, userInfo: info)
  }
}

extension URLError {
  /// The user-info key that marks the error of a stub that cannot answer (a template that
  /// fails to render, a body that cannot be read): the loopback server answers it `500`
  /// with the report, as WireMock does, instead of dropping the connection.
  package static let stubCannotAnswerKey = "HTTPSessionMocksStubCannotAnswer"

  /// `URLError(.resourceUnavailable)` for a stub that cannot answer `request`, marked with
  /// ``stubCannotAnswerKey``.
  init(stubCannotAnswer request: URLRequest, description: String) {
    let base = URLError(.resourceUnavailable, for: request, description: description)
    var info = base.userInfo
    info[Self.stubCannotAnswerKey] = true
    self.init(.resourceUnavailable, userInfo: info)
  }

  /// Whether this is the error of a stub that cannot answer (see ``stubCannotAnswerKey``).
  package var isStubCannotAnswer: Bool { userInfo[Self.stubCannotAnswerKey] as? Bool == true }

  /// `URLError(.cancelled)` as URLSession makes it, with the description "cancelled".
  init(cancelledFor request: URLRequest) {
    self.init(.cancelled, for: request, description: "cancelled")
  }

  /// `URLError(.timedOut)` as Apple's URLSession makes it, with the description "The request
  /// timed out.". (swift-corelibs-foundation's URLSession makes its timeout error with no user
  /// info at all; the mock follows Apple's, which carries more and costs nothing.)
  init(timedOutFor request: URLRequest) {
    self.init(.timedOut, for: request, description: "The request timed out.")
  }
}
