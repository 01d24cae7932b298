import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLError {
  /// `URLError(.timedOut)` as Apple's URLSession makes it: the failing URL and its string, and
  /// the description "The request timed out.".
  ///
  /// (swift-corelibs-foundation's URLSession makes its timeout error with no user info at all;
  /// the mock follows Apple's, which carries more and costs nothing.)
  init(timedOutFor request: URLRequest) {
    var info: [String: Any] = [NSLocalizedDescriptionKey: "The request timed out."]
    if let url = request.url {
      info[NSURLErrorFailingURLErrorKey] = url
      // The key URLSession fills in (its constant is deprecated in favour of the URL one).
      info["NSErrorFailingURLStringKey"] = url.absoluteString
    }
    self.init(.timedOut, userInfo: info)
  }
}
