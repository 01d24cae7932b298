import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An HTTP response that carries what `HTTPURLResponse` cannot, for the loopback server, which
/// writes it on the wire: headers sent once a value (several `Set-Cookie`) and the status
/// line's reason phrase.
///
/// Its header fields hold each multi-valued header's values joined with `, `, as `URLSession`
/// shows repeated headers, and ``values`` keeps them apart; ``reasonPhrase`` replaces the
/// standard phrase of the status. The other doors hand it to the code under test as the
/// `HTTPURLResponse` it is.
package final class StubHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
  // @unchecked Sendable: `values` and `reasonPhrase` are `let`s of values, and the response is
  // never changed after it is made (as every HTTPURLResponse a stub makes).

  /// The headers with several values, by name, each value in order.
  package let values: [String: [String]]
  /// The status line's reason phrase, or `nil` for the standard one.
  package let reasonPhrase: String?

  init?(
    url: URL, statusCode: Int, headerFields: [String: String], values: [String: [String]],
    reasonPhrase: String?
  ) {
    self.values = values
    self.reasonPhrase = reasonPhrase
    super.init(
      url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headerFields)
  }

  required init?(coder: NSCoder) {
    values = [:]
    reasonPhrase = nil
    super.init(coder: coder)
  }
}
