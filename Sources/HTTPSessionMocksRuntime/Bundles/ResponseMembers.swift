import Foundation

/// How a file format names the members that say an HTTP answer (status, reason phrase, headers,
/// body) in a `response` object, and the one writer of those members: our format and WireMock's
/// say the same things under other names.
struct ResponseMembers {
  /// The member for the reason phrase (`reasonPhrase`, `statusMessage`).
  let phrase: String
  /// The member for a text body (`text`, `body`).
  let text: String
  /// The member for a JSON body, written as the JSON itself (`json`, `jsonBody`).
  let json: String

  /// Our format (bundle.json).
  static let native = ResponseMembers(phrase: "reasonPhrase", text: "text", json: "json")
  /// WireMock's mappings.
  static let wireMock = ResponseMembers(phrase: "statusMessage", text: "body", json: "jsonBody")

  /// Writes the status, reason phrase, headers (a repeated field as an array) and body of
  /// `response`, an HTTP answer, into `members`. A body of bytes (or a JSON body that does not
  /// parse) goes to `bytes` with its file name, if it has one; a stored file that cannot be read
  /// throws `fail`'s error.
  func write(
    _ response: StubResponse, body: StubResponse.Body, status: Int,
    headers: [String: String], into members: inout [String: JSONValue],
    fail: (String) -> MockBundleError,
    bytes: (Data, _ name: String?, inout [String: JSONValue]) -> Void
  ) throws(MockBundleError) {
    members["status"] = .integer(Int64(status))
    if let reasonPhrase = response.storage.reasonPhrase {
      members[phrase] = .string(reasonPhrase)
    }
    if !headers.isEmpty {
      var fields: [String: JSONValue] = headers.mapValues { .string($0) }
      for (name, values) in response.storage.headerValues {
        fields[name] = .array(values.map { .string($0) })
      }
      members["headers"] = .object(fields)
    }
    switch body {
    case .empty: break
    case .text(let content): members[text] = .string(content)
    case .json(let data):
      if let value = try? JSONValue(parsing: data) {
        members[json] = value
      } else {
        bytes(data, nil, &members)
      }
    case .data(let data): bytes(data, nil, &members)
    case .stored(let path, let data): bytes(data, path, &members)
    case .file(let name, _):
      switch response.storage.bytes(of: body) {
      case .success(let data): bytes(data, name, &members)
      case .failure(let problem): throw fail(problem.message)
      }
    }
  }
}
