import Foundation
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hands each request to the mock's one request path (`send(_:kind:door:to:)`, door
/// `.server`). Routing, recording, delays on the clock and failure reports all happen there;
/// the connection only translates HTTP/1.1 in and out.
struct MockExchangeHandler: ExchangeHandler {
  let mock: URLSessionMock

  func send(_ request: URLRequest, to sink: some ResponseSink) -> @Sendable () -> Void {
    // A request off the wire is recorded as a data task, body or not.
    let task = mock.send(request, kind: .data, door: .server, to: sink)
    return { task.cancel() }
  }
}
