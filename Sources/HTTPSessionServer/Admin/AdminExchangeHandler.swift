import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The server's handler when the admin API is on: a request under `/__admin` that
/// ``AdminGuard`` lets through goes to the ``AdminAPI`` and never reaches the mock (so it is not
/// in the mock's journal), and one it refuses is answered `403` and recorded as the server's own
/// answer; every other request goes to the mock's one request path, as without the admin API,
/// and the admin API notes when it arrived (WireMock's `loggedDate`).
struct AdminExchangeHandler: ExchangeHandler {
  let mock: MockExchangeHandler
  let admin: AdminAPI

  func send(_ request: URLRequest, kind: SessionEvent.TaskKind, to sink: some ResponseSink)
    -> @Sendable () -> Void
  {
    if let url = request.url, Self.isAdmin(url) {
      let refusal =
        AdminGuard(serverURL: url).map { $0.refusal(of: request) }
        ?? "The admin API cannot tell this server's own address from \(url), so it answers no one."
      if let refusal {
        refuse(request, kind: kind, because: refusal, to: sink)
        return {}
      }
      // A report the mock makes for an admin call (a mapping that can never match) lands in
      // the test, as the mock's reports for requests do.
      return withReports(relayedThrough: mock.context?.current) {
        admin.answer(request, to: sink)
      }
    }
    let arrived = Date()
    let task = mock.start(request, kind: kind, to: sink)
    admin.logged(task.taskIdentifier, at: arrived)
    return { task.cancel() }
  }

  func reporting<R>(_ body: () -> R) -> R { mock.reporting(body) }

  func refused(
    _ request: URLRequest, kind: SessionEvent.TaskKind, with response: HTTPURLResponse,
    body: Data
  ) {
    mock.refused(request, kind: kind, with: response, body: body)
  }

  /// Answers an admin request that ``AdminGuard`` refuses: `403` with WireMock's error document
  /// saying why. The mock records it as the server's own answer (like a refused WebSocket
  /// upgrade), so that the journal and the `stub-server` log show who was turned away; no stub
  /// is asked.
  private func refuse(
    _ request: URLRequest, kind: SessionEvent.TaskKind, because reason: String,
    to sink: some ResponseSink
  ) {
    let body = AdminJSON.data(
      AdminJSON.errors(code: 403, title: "Admin request refused", detail: reason))
    guard let url = request.url,
      let response = HTTPURLResponse(
        url: url, statusCode: 403, httpVersion: "HTTP/1.1",
        headerFields: ["Content-Type": "application/json"])
    else { return sink.finish(.failed(URLError(.badURL))) }
    mock.refused(request, kind: kind, with: response, body: body)
    sink.receiveWhole(response, body, .complete)
  }

  /// Whether `url`'s path is `/__admin` or below it. The server's URLs are its base URL
  /// (`http://host:port`) and the path as sent, so the path starts at the first `/` after
  /// `://`; no URL parsing on the path of every request.
  static func isAdmin(_ url: URL) -> Bool {
    let text = url.absoluteString.utf8
    guard let scheme = text.firstRange(of: "://".utf8) else { return false }
    guard let slash = text[scheme.upperBound...].firstIndex(of: UInt8(ascii: "/")) else {
      return false
    }
    let path = text[slash...]
    let prefix = "/__admin".utf8
    guard path.starts(with: prefix) else { return false }
    let rest = path.dropFirst(prefix.count)
    guard let next = rest.first else { return true }
    return next == UInt8(ascii: "/") || next == UInt8(ascii: "?")
  }
}
