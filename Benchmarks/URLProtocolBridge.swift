import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension Scenario {
  /// (9) The URLProtocol bridge: a real `URLSession` answered by a one-stub mock with the same
  /// prebuilt answer as the bare stub of (5), one request at a time (each waits for its
  /// completion). The session comes from `mock.makeURLSession()`, which turns the URL cache
  /// off; `throughIntercept` makes it instead from an intercepted `.ephemeral` configuration with
  /// the URL cache put back, exactly like the bare stub's, so that the two figures differ only by
  /// the bridge: the mock's isolation (the per-mock class and its table), routing, the journal
  /// and the sink.
  static func urlProtocolBridge(_ count: Int, throughIntercept: Bool = false) throws -> Workload {
    let name = throughIntercept ? "bridge-intercepted" : "urlprotocol-bridge"
    let mock = URLSessionMock()
    mock.stub(.any, with: StubResponse(data: Fixture.body, response: Fixture.response, error: nil))
    let session: URLSession
    if throughIntercept {
      let configuration = URLSessionConfiguration.ephemeral
      mock.intercept(configuration)
      configuration.urlCache = URLSessionConfiguration.ephemeral.urlCache  // as the bare stub's
      session = URLSession(configuration: configuration)
    } else {
      session = mock.makeURLSession()
    }
    let sink = Sink()
    let record = sink.handler
    let answered = DispatchSemaphore(value: 0)
    let handler: Sink.Handler = { data, response, error in
      record(data, response, error)
      answered.signal()
    }
    let request = Fixture.request
    session.dataTask(with: request, completionHandler: handler).resume()
    answered.wait()
    try sink.check(name, expected: 1)
    var workload = Workload(
      sync: {
        for _ in 0..<count {
          session.dataTask(with: request, completionHandler: handler).resume()
          answered.wait()
        }
      },
      check: {
        try sink.check(name, expected: count + 1)
        guard mock.requests.count == count + 1 else {
          throw BenchmarkError(
            description: "\(name): the mock recorded \(mock.requests.count) requests")
        }
      })
    workload.tearDown = { session.invalidateAndCancel() }
    return workload
  }
}
