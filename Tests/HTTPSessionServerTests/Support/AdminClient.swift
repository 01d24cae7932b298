import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Calls a server's admin API over 127.0.0.1 with a real URLSession.
struct AdminClient {
  let base: String
  let session = liveSession()

  init(_ baseURL: URL) {
    let text = baseURL.absoluteString
    base = text.hasSuffix("/") ? String(text.dropLast()) : text
  }

  /// Sends `method path` (a path that starts with `/`) with `body`; returns the answer.
  @discardableResult
  func call(_ method: String, _ path: String, _ body: String? = nil) async throws -> Answer {
    var request = URLRequest(url: try #require(URL(string: base + path)))
    request.httpMethod = method
    if let body {
      request.httpBody = Data(body.utf8)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await session.data(for: request)
    return Answer(status: try #require(response as? HTTPURLResponse).statusCode, data: data)
  }

  /// An admin answer: its status and body.
  struct Answer: Sendable {
    let status: Int
    let data: Data
    /// The body read as a JSON object; `nil` when it is not one.
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: data) as? [String: Any] }
    var text: String { String(decoding: data, as: UTF8.self) }
  }

  /// The `requests` list of an answer.
  static func requests(_ json: [String: Any]?) -> [[String: Any]] {
    json?["requests"] as? [[String: Any]] ?? []
  }
}
