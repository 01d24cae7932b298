import Foundation
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hands each request to the mock's one request path and translates its answer for the
/// connection. Routing, recording, delays and failure reports all happen in the mock.
struct MockExchangeHandler: ExchangeHandler {
  let mock: URLSessionMock

  func send(_ request: URLRequest, to sink: any ExchangeSink) -> @Sendable () -> Void {
    let task = mock.dataTask(with: request) { data, response, error in
      if let error {
        let text = String(describing: error)
        if let urlError = error as? URLError, urlError.code == .resourceUnavailable,
          text.contains("no stub matches")
        {
          sink.finish(.unmatched(report: urlError.localizedDescription))
        } else {
          sink.finish(.failed(error))
        }
        return
      }
      if let response { sink.receive(response) }
      if let data, !data.isEmpty { sink.receive(data) }
      sink.finish(.complete)
    }
    task.resume()
    return { task.cancel() }
  }
}
