import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A WebSocket script in a bundle file (our format), as a response's `webSocket` member:
///
/// ```json
/// {"webSocket": {"subprotocol": "chat", "steps": [
///   {"send": "welcome"}, {"send": {"base64": "AQID"}},
///   {"receive": "hi"}, {"receive": null},
///   {"wait": "2s"}, "ping", {"close": 1000, "reason": "bye"}, "drop"
/// ]}}
/// ```
///
/// A text message is a string, a binary one `{"base64": ...}`; `{"receive": null}` takes any
/// message.
enum WebSocketCoding {
  static func encode(subprotocol: String?, steps: [WebSocketStep]) -> JSONValue {
    var members: [String: JSONValue] = ["steps": .array(steps.map(encode))]
    if let subprotocol { members["subprotocol"] = .string(subprotocol) }
    return .object(members)
  }

  private static func encode(_ step: WebSocketStep) -> JSONValue {
    switch step.kind {
    case .send(let payload): return .object(["send": encode(payload)])
    case .receive(let payload): return .object(["receive": payload.map(encode) ?? .null])
    case .wait(let duration): return .object(["wait": .string(DurationCoding.encode(duration))])
    case .ping: return .string("ping")
    case .drop: return .string("drop")
    case .close(let code, let reason):
      var members: [String: JSONValue] = ["close": .integer(Int64(code))]
      if let reason { members["reason"] = .string(reason) }
      return .object(members)
    }
  }

  private static func encode(_ payload: WebSocketPayload) -> JSONValue {
    switch payload.form {
    case .text(let text): return .string(text)
    case .binary(let data): return .object(["base64": .string(data.base64EncodedString())])
    }
  }

  /// The script at `cursor`, a response's `webSocket` member.
  static func decode(_ cursor: JSONCursor) throws(MockBundleError) -> StubResponse {
    try cursor.rejectUnknownMembers(["subprotocol", "steps"])
    let subprotocol = try cursor.optionalString("subprotocol")
    if let subprotocol, !subprotocol.isHTTPToken, let member = try cursor.optional("subprotocol") {
      throw member.expected("a subprotocol name: a token such as \"chat\"")
    }
    var steps: [WebSocketStep] = []
    for element in try cursor.required("steps", "an array of steps").elements() {
      steps.append(try step(element))
    }
    return .webSocket(subprotocol: subprotocol, steps)
  }

  private static let stepNames: Set<String> = ["send", "receive", "wait", "close"]

  private static func step(_ cursor: JSONCursor) throws(MockBundleError) -> WebSocketStep {
    if let name = try? cursor.string() {
      switch name {
      case "ping": return .ping
      case "drop": return .drop
      default:
        throw cursor.expected(
          "a step: \"ping\", \"drop\", or an object with send, receive, wait or close")
      }
    }
    let keys = try cursor.keys()
    guard let name = keys.first(where: stepNames.contains) else {
      throw cursor.expected("a step: an object with one of send, receive, wait or close")
    }
    switch name {
    case "send":
      try cursor.rejectUnknownMembers(["send"])
      return WebSocketStep(.send(try payload(try cursor.required("send", "a message"))))
    case "receive":
      try cursor.rejectUnknownMembers(["receive"])
      let member = try cursor.required("receive", "a message or null")
      return WebSocketStep(.receive(member.isNull ? nil : try payload(member)))
    case "wait":
      try cursor.rejectUnknownMembers(["wait"])
      let member = try cursor.required("wait", "a duration such as \"2s\"")
      let duration = try DurationCoding.decode(member)
      guard duration >= .zero else { throw member.expected("a duration of zero or more") }
      return .wait(duration)
    default:
      try cursor.rejectUnknownMembers(["close", "reason"])
      let member = try cursor.required("close", "a close code")
      let code = try member.integer()
      guard (1000...4999).contains(code) else {
        throw member.expected("a close code from 1000 to 4999")
      }
      // corelibs Foundation's CloseCode has no case for 1012-1014 or 3000-4999: such a code
      // would reach the client and the journal as `.invalid`, so it is refused by name.
      guard URLSessionWebSocketTask.CloseCode(rawValue: code) != nil else {
        throw member.fail(
          "close code \(code) has no URLSessionWebSocketTask.CloseCode on this platform (corelibs "
            + "Foundation knows 1000-1003, 1005-1011 and 1015), so it would arrive as .invalid; "
            + "use one of those")
      }
      return WebSocketStep(.close(code: code, reason: try cursor.optionalString("reason")))
    }
  }

  private static func payload(_ cursor: JSONCursor) throws(MockBundleError) -> WebSocketPayload {
    if let text = try? cursor.string() { return WebSocketPayload(text: text) }
    try cursor.rejectUnknownMembers(["base64"])
    let member = try cursor.required("base64", "base64 bytes of a binary message")
    guard let data = Data(base64Encoded: try member.string()) else {
      throw member.expected("base64 text")
    }
    return WebSocketPayload(binary: data)
  }
}
