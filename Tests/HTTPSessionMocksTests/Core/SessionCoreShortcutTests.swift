import Foundation
import HTTPSessionKit
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `SessionCore.resume` decides the common requests in the critical region that records them
/// (its shortcut); the long way (decide, then carry out) must reach the same answers and the
/// same journal. The same requests run with the shortcut on and off, and the journals are
/// compared exchange by exchange.
@Suite struct SessionCoreShortcutTests {
  /// One exchange as the comparison sees it: everything the journal shows of it.
  private static func line(_ exchange: Exchange) -> String {
    let request = exchange.request
    let status = exchange.httpResponse.map { "\($0.statusCode)" } ?? "-"
    let location = exchange.httpResponse?.value(forHTTPHeaderField: "Location") ?? "-"
    let body = exchange.body.map { String(decoding: $0, as: UTF8.self) } ?? "-"
    let error = (exchange.error as? URLError).map { "\($0.code.rawValue)" } ?? "-"
    return "#\(exchange.taskIdentifier) \(exchange.door) \(request.httpMethod ?? "GET") "
      + "\(request.url?.absoluteString ?? "-") -> \(status) \(location) \(body) error \(error) "
      + "by \(exchange.answeredBy ?? "-")"
  }

  /// The journal of `mock` (and of `spy`, which forwards to it) after the same requests
  /// through every door, with the cores' shortcut on or off.
  private static func journals(shortcuts: Bool) -> (mock: [String], spy: [String]) {
    let mock = URLSessionMock()
    let spy = SpySession(wrapping: mock)
    for core in [mock.core, spy.core] { core.withLock { $0.takesShortcuts = shortcuts } }
    mock.unmatchedRequestPolicy = .respond(with: .text("nobody", status: 404))
    // `answeredBy` names each stub's line: the same on both runs.
    mock.stub(.get("/fixed"), with: .text("fixed"))
    mock.stub(.get("/users/{login}"), with: .text("user", headers: ["X-Kind": "user"]))
    mock.stub(.get("/turns"), with: [.text("one"), .text("two"), .status(204)])
    mock.stub(.get("/moved"), with: .status(302, headers: ["Location": "/fixed"]))
    mock.stub(.post("/items"), with: .text("created", status: 201))
    let base = "https://api.example.com"
    var requests: [URLRequest] = []
    for path in ["/fixed", "/users/a", "/users/b", "/turns", "/turns", "/turns", "/turns"] {
      requests.append(URLRequest(url: URL(string: base + path)!))
    }
    var head = URLRequest(url: URL(string: base + "/fixed")!)
    head.httpMethod = "HEAD"
    requests.append(head)
    var post = URLRequest(url: URL(string: base + "/items")!)
    post.httpMethod = "POST"
    post.httpBody = Data("{}".utf8)
    requests.append(post)
    requests.append(URLRequest(url: URL(string: base + "/moved")!))
    requests.append(URLRequest(url: URL(string: base + "/nowhere")!))
    for request in requests {
      // The injected door (which follows redirects), twice: the second finds the answer built.
      mock.dataTask(with: request) { _, _, _ in }.resume()
      mock.dataTask(with: request) { _, _, _ in }.resume()
      // The loopback server's door (which hands redirects to its client).
      mock.send(request, kind: .data, door: .server, to: DiscardingSink())
      // A forwarding spy, whose forward enters the mock through its injected door.
      spy.dataTask(with: request) { _, _, _ in }.resume()
    }
    return (mock.exchanges.map(line), spy.exchanges.map(line))
  }

  @Test func theShortcutKeepsTheJournalOfTheLongWay() {
    let fast = Self.journals(shortcuts: true)
    let slow = Self.journals(shortcuts: false)
    // 11 requests, each twice through the injected door, once through the server's and once
    // through the spy; the three followed redirects add a hop each.
    #expect(fast.mock.count == 47)
    #expect(fast.spy.count == 11)
    #expect(fast.mock.count == slow.mock.count)
    #expect(fast.spy.count == slow.spy.count)
    for (shortcut, longWay) in zip(fast.mock, slow.mock) { #expect(shortcut == longWay) }
    for (shortcut, longWay) in zip(fast.spy, slow.spy) { #expect(shortcut == longWay) }
  }
}

/// A sink that drops what it is given.
private final class DiscardingSink: ResponseSink {
  func receive(_ response: URLResponse) {}
  func receive(_ body: Data) {}
  func finish(_ end: ExchangeEnd) {}
}
