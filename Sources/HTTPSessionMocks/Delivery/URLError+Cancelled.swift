import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLError {
  /// `URLError(.cancelled)` as URLSession makes it: the failing URL and its string, and the
  /// description "cancelled".
  init(cancelledFor request: URLRequest) {
    var info: [String: Any] = [NSLocalizedDescriptionKey: "cancelled"]
    if let url = request.url {
      info[NSURLErrorFailingURLErrorKey] = url
      // The key URLSession fills in (its constant is deprecated in favour of the URL one).
      info["NSErrorFailingURLStringKey"] = url.absoluteString
    }
    self.init(.cancelled, userInfo: info)
  }
}
