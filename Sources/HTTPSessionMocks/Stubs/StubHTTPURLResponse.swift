import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An HTTP response with headers sent once a value (several `Set-Cookie`): its header fields
/// hold each such header's values joined with `, `, as `URLSession` shows repeated headers, and
/// ``values`` keeps them apart for the loopback server, which writes one line a value.
package final class MultiValueHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
  // @unchecked Sendable: `values` is a `let` of values, and the response is never changed
  // after it is made (as every HTTPURLResponse a stub makes).

  /// The headers with several values, by name, each value in order.
  package let values: [String: [String]]

  init?(url: URL, statusCode: Int, headerFields: [String: String], values: [String: [String]]) {
    self.values = values
    super.init(
      url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headerFields)
  }

  required init?(coder: NSCoder) {
    values = [:]
    super.init(coder: coder)
  }
}
