import Foundation
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How one exchange ended, as the connection sees it.
enum ExchangeOutcome: Sendable {
  /// The answer is complete: write status, headers and body.
  case complete
  /// A transport error (a stub's `URLError` fault, a cancellation, a timeout).
  case failed(any Error)
  /// No stub matched; the mock has reported the failure; answer 404 with `report`.
  case unmatched(report: String)
}

/// Where the mock's answer to one request goes: a response, body pieces, then one end.
protocol ExchangeSink: Sendable {
  func receive(_ response: URLResponse)
  func receive(_ body: Data)
  func finish(_ outcome: ExchangeOutcome)
}

/// The mock seen from a connection: one call per request, answered into a sink.
protocol ExchangeHandler: Sendable {
  /// Sends `request` through the mock; the returned closure cancels the exchange.
  func send(_ request: URLRequest, to sink: any ExchangeSink) -> @Sendable () -> Void
}
