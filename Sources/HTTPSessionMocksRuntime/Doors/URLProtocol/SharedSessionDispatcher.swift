import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The protocol class that `URLSession.shared` consults for the mock of the active
/// ``URLSessionMock/interceptingSharedSession(isolation:fileID:filePath:line:column:_:)`` scope.
///
/// It is registered once per process (`URLProtocol.registerClass`) and never unregistered:
/// on Linux `URLSession.shared` copies the registered classes when it is first used, so a class
/// registered later, or unregistered later, changes nothing for it. Outside a scope it declines
/// every request (`canInit` is `false`), so URL loading goes on as if it were not there; it
/// always answers its own probe request, which tells whether `URLSession.shared` routes
/// through it at all.
///
/// Inside a scope it takes only the requests it cannot tell come from elsewhere
/// (``SharedSessionGate/admits(_:)``). Corelibs asks `canInit` synchronously inside the task's
/// `resume()`, on the thread that calls it, where the scope's task-local mark can be read; it
/// makes the protocol object later, on a background thread (after a lookup in
/// `URLSession.shared`'s URL cache), and calls `startLoading()` on its work queue, where no test
/// context is left. So the decision is taken in `canInit`, and everything the mock reports while
/// it loads is relayed to the test of the scope (``TestContextRelay``, captured when the scope
/// began), never recorded on URL loading's threads.
final class SharedSessionDispatcher: MockURLProtocol {
  override class func canInit(with request: URLRequest) -> Bool {
    SharedSessionGate.isProbe(request) || SharedSessionGate.admits(request)
  }

  /// The mock of the scope that took the request, found when loading starts.
  private var admitted: URLSessionMock?

  override func answeringMock() -> URLSessionMock? { admitted }

  override var missingMockReason: String {
    "the interceptingSharedSession scope ended before URLSession.shared started this request"
  }

  override func startLoading() {
    guard SharedSessionGate.isProbe(request), let url = request.url else {
      let admission = SharedSessionGate.admission(for: request)
      admitted = admission?.mock
      // URL loading runs this on its work queue: what the mock reports goes to the scope's test.
      withReports(relayedThrough: admission?.relay) { super.startLoading() }
      return
    }
    let response = HTTPURLResponse(
      url: url, statusCode: 204, httpVersion: "HTTP/1.1",
      headerFields: [SharedSessionGate.probeHeader: "installed"])
    if let response {
      client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }
    client?.urlProtocolDidFinishLoading(self)
  }
}
