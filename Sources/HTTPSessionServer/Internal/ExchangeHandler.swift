import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The mock seen from a connection: one call per request, answered into a sink.
///
/// The server's handlers are ``MockExchangeHandler`` and, with the admin API on,
/// ``AdminExchangeHandler`` in front of it; the protocol keeps the connection layer independent
/// of the mock, so that it can be driven without one. Its requirements have no defaults: a
/// handler that forgot to record a refusal or to route reports would lose them silently, so it
/// does not compile.
protocol ExchangeHandler: Sendable {
  /// Sends `request` as a task of `kind` (`.data`, or `.webSocket` for a valid upgrade); the
  /// answer arrives in `sink`. The returned closure cancels the exchange.
  func send(_ request: URLRequest, kind: SessionEvent.TaskKind, to sink: some ResponseSink)
    -> @Sendable () -> Void

  /// Records the server's own answer to `request`, which it refused without sending it on (a
  /// WebSocket upgrade with a bad key or version): the connection writes the answer itself.
  func refused(
    _ request: URLRequest, kind: SessionEvent.TaskKind, with response: HTTPURLResponse,
    body: Data)

  /// Runs `body`, which may make reports (a WebSocket conversation told what the client
  /// sent), where the mock's reports for requests land: in the test that started the server.
  func reporting<R>(_ body: () -> R) -> R
}

extension ExchangeHandler {
  /// Sends `request` as a data task: every request off the wire but an upgrade.
  func send(_ request: URLRequest, to sink: some ResponseSink) -> @Sendable () -> Void {
    send(request, kind: .data, to: sink)
  }
}
