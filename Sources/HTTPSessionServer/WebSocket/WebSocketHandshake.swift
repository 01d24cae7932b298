import Foundation

/// The server's side of the WebSocket opening handshake (RFC 6455 §4.2): which requests are
/// upgrades, the `Sec-WebSocket-Accept` value, and the subprotocol to answer with.
enum WebSocketHandshake {
  /// The GUID that RFC 6455 appends to the client's key.
  static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

  /// What a valid upgrade request asked for.
  struct Request: Sendable, Equatable {
    /// The client's `Sec-WebSocket-Key`.
    let key: String
    /// The subprotocols it offers, in its order of preference.
    let protocols: [String]
  }

  /// Whether a request asks to upgrade at all: an `Upgrade: websocket` header. A request that
  /// asks but is not valid gets ``validate(method:header:)``'s refusal.
  static func isUpgrade(header: (String) -> String?) -> Bool {
    tokens(header("Upgrade")).contains { $0.caseInsensitiveCompare("websocket") == .orderedSame }
  }

  /// The upgrade `method` and the headers that `header` reads (by name, in any case) ask for,
  /// or why it cannot be accepted, for a 400 (or 426 for a version other than 13).
  static func validate(method: String, header: (String) -> String?) -> Result<Request, Refusal> {
    guard method == "GET" else { return .failure(Refusal(status: 400, "the method is not GET")) }
    guard isUpgrade(header: header) else {
      return .failure(Refusal(status: 400, "Upgrade does not name websocket"))
    }
    guard
      tokens(header("Connection")).contains(where: {
        $0.caseInsensitiveCompare("upgrade") == .orderedSame
      })
    else {
      return .failure(Refusal(status: 400, "Connection does not name upgrade"))
    }
    guard header("Sec-WebSocket-Version")?.trimmingCharacters(in: .whitespaces) == "13" else {
      return .failure(Refusal(status: 426, "Sec-WebSocket-Version is not 13"))
    }
    guard let key = header("Sec-WebSocket-Key")?.trimmingCharacters(in: .whitespaces),
      let decoded = Data(base64Encoded: key), decoded.count == 16
    else {
      return .failure(
        Refusal(status: 400, "Sec-WebSocket-Key is not 16 bytes in base64"))
    }
    return .success(Request(key: key, protocols: tokens(header("Sec-WebSocket-Protocol"))))
  }

  /// The `Sec-WebSocket-Accept` value for `key`: base64 of the SHA-1 of the key and the GUID.
  static func accept(forKey key: String) -> String {
    Data(SHA1.digest(Array((key + guid).utf8))).base64EncodedString()
  }

  /// The subprotocol to answer with: `wanted` when the client offered it (names compare
  /// exactly, as the RFC says), else `nil`.
  static func negotiate(_ wanted: String?, offered: [String]) -> String? {
    guard let wanted, offered.contains(wanted) else { return nil }
    return wanted
  }

  /// Why an upgrade request is refused, with the status to answer.
  struct Refusal: Error, Sendable, Equatable {
    let status: Int
    let reason: String
    init(status: Int, _ reason: String) {
      self.status = status
      self.reason = reason
    }
  }

  /// The comma-separated tokens of a header value, trimmed, without empty ones.
  private static func tokens(_ value: String?) -> [String] {
    (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { !$0.isEmpty }
  }
}
