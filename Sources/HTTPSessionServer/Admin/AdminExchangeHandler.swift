import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The server's handler when the admin API is on: a request under `/__admin` goes to the
/// ``AdminAPI`` and never reaches the mock (so it is not in the mock's journal); every other
/// request goes to the mock's one request path, as without the admin API, and the admin API
/// notes when it arrived (WireMock's `loggedDate`).
struct AdminExchangeHandler: ExchangeHandler {
  let mock: MockExchangeHandler
  let admin: AdminAPI

  func send(_ request: URLRequest, kind: SessionEvent.TaskKind, to sink: some ResponseSink)
    -> @Sendable () -> Void
  {
    if let url = request.url, Self.isAdmin(url) {
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
