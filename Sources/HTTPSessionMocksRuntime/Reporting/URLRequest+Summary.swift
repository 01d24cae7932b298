import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLRequest {
  /// `METHOD URL`, as the doubles print a request in their messages.
  var summary: String {
    "\((httpMethod ?? "GET").uppercased()) \(url?.absoluteString ?? "(no URL)")"
  }
}
