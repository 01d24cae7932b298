import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension StubResponse {
  /// Accepts a WebSocket upgrade and runs `steps` as the server's side of the conversation.
  ///
  /// ```swift
  /// // Production code
  /// let socket = session.webSocket(with: URLRequest(url: chatURL))
  /// socket.resume()
  /// try await socket.send(.string("hi"))
  /// let reply = try await socket.receive()
  ///
  /// // The test
  /// mock.stub(.get("/chat"), with: .webSocket(subprotocol: "chat", [
  ///   .receive(.string("hi")),
  ///   .send(.string("hello")),
  ///   .close(.normalClosure, reason: "bye"),
  /// ]))
  /// ```
  ///
  /// The injected mock's `webSocket(with:)` tasks and the loopback server's `ws://` URLs run
  /// the script; every message both ways is in the journal
  /// (``URLSessionMock/webSocketMessages(for:)``). A request that is not a WebSocket upgrade
  /// (a data task, a plain `GET` to the server) gets `426 Upgrade Required`. To refuse an
  /// upgrade as a server would, stub the request with a status instead
  /// (`.status(403)`): the client's task fails.
  ///
  /// - Parameters:
  ///   - subprotocol: The subprotocol the server speaks; the handshake names it when the
  ///     client offers it (`Sec-WebSocket-Protocol`).
  ///   - steps: What the server does, in order: see ``WebSocketStep``.
  public static func webSocket(subprotocol: String? = nil, _ steps: [WebSocketStep])
    -> StubResponse
  {
    if let subprotocol, !subprotocol.isHTTPToken {
      return StubResponse(
        .invalid(
          "The WebSocket subprotocol \(String(reflecting: subprotocol)) is not a token (letters, "
            + "digits and !#$%&'*+-.^_`|~, no spaces or commas); give a name such as \"chat\"."))
    }
    return StubResponse(.webSocket(subprotocol: subprotocol, steps: steps))
  }

  /// The script, when this response is one.
  var webSocketScript: (subprotocol: String?, steps: [WebSocketStep])? {
    guard case .webSocket(let subprotocol, let steps) = content else { return nil }
    return (subprotocol, steps)
  }

  /// The `101 Switching Protocols` that accepts `request`'s upgrade: it names the subprotocol
  /// when the request offers it.
  static func upgradeResponse(for request: URLRequest, subprotocol: String?) -> HTTPURLResponse? {
    var headers = ["Upgrade": "websocket", "Connection": "Upgrade"]
    if let subprotocol, request.offersWebSocketSubprotocol(subprotocol) {
      headers["Sec-WebSocket-Protocol"] = subprotocol
    }
    return HTTPURLResponse(
      url: request.url ?? URL(fileURLWithPath: "/"), statusCode: 101, httpVersion: "HTTP/1.1",
      headerFields: headers)
  }

  /// What a WebSocket stub answers a request that is not an upgrade.
  static func upgradeRequired(for request: URLRequest) -> Answer {
    let body = Data(
      """
      426 Upgrade Required: this URL answers WebSocket connections only (a GET with \
      Upgrade: websocket); its stub is a WebSocket script.

      """.utf8)
    let response = HTTPURLResponse(
      url: request.url ?? URL(fileURLWithPath: "/"), statusCode: 426, httpVersion: "HTTP/1.1",
      headerFields: [
        "Upgrade": "websocket", "Connection": "Upgrade",
        "Content-Type": "text/plain; charset=utf-8", "Content-Length": String(body.count),
      ])
    return Answer(data: request.isHead ? Data() : body, response: response, error: nil)
  }
}

extension URLRequest {
  /// Whether the request's `Sec-WebSocket-Protocol` offers `subprotocol`.
  func offersWebSocketSubprotocol(_ subprotocol: String) -> Bool {
    guard let offered = value(forHTTPHeaderField: "Sec-WebSocket-Protocol") else { return false }
    return offered.split(separator: ",").contains {
      $0.trimmingCharacters(in: .whitespaces) == subprotocol
    }
  }
}

extension String {
  /// Whether the string is an HTTP token (RFC 9110), as a header's value list item must be.
  var isHTTPToken: Bool {
    !isEmpty
      && utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"):
          return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
      }
  }
}
