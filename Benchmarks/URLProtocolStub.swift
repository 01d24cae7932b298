import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The URLProtocol way of stubbing, as OHHTTPStubs, Mocker and Mockingjay do it: a protocol
/// class that a real `URLSession` consults for every request, answering from a canned body.
///
/// It is registered only in the benchmark's own ephemeral configuration (never globally), and
/// answers with the prebuilt response, so it does no more work than the mock does.
final class URLProtocolStub: URLProtocol {
  static let body = Fixture.body
  static let response = Fixture.response

  override class func canInit(with request: URLRequest) -> Bool { true }

  override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

  override func startLoading() {
    client?.urlProtocol(self, didReceive: Self.response, cacheStoragePolicy: .notAllowed)
    client?.urlProtocol(self, didLoad: Self.body)
    client?.urlProtocolDidFinishLoading(self)
  }

  override func stopLoading() {}

  /// A real session whose only protocol is this stub.
  static func makeSession() -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.protocolClasses = [URLProtocolStub.self]
    return URLSession(configuration: configuration)
  }
}
