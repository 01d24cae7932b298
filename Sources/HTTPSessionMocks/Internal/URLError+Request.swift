import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLError {
  /// `URLError(code)` with the failing URL in its user info, as URLSession makes them.
  init(_ code: URLError.Code, for request: URLRequest, description: String? = nil) {
    var info: [String: Any] = [:]
    if let url = request.url {
      info[NSURLErrorFailingURLErrorKey] = url
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
