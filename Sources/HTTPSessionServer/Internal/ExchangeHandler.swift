import Foundation
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The mock seen from a connection: one call per request, answered into a sink.
///
/// The server's only implementation is ``MockExchangeHandler``; the protocol keeps the
/// connection layer independent of the mock, so that it can be driven without one.
protocol ExchangeHandler: Sendable {
  /// Sends `request`; the answer arrives in `sink`. The returned closure cancels the exchange.
  func send(_ request: URLRequest, to sink: some ResponseSink) -> @Sendable () -> Void
}
