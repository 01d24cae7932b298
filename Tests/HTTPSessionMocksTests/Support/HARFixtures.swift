import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Files, requests and HAR documents for the HAR, replay, recording and redaction tests.
enum HARFixtures {
  /// A new empty folder under the temporary directory.
  static func folder() throws -> URL {
    try TemporaryFolder.scratch("har-tests")
  }

  /// A file in a new folder holding `text`.
  static func file(_ text: String, named name: String = "session.har") throws -> URL {
    let file = try folder().appendingPathComponent(name)
    try Data(text.utf8).write(to: file)
    return file
  }

  /// A strict replaying mock over `text`, with a live session that must never be used.
  static func replaying(
    _ text: String, redacting redaction: Redaction = .none, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) throws -> (mock: URLSessionMock, live: URLSessionMock) {
    let live = URLSessionMock()
    let mock = try URLSessionMock(
      replaying: file(text), mode: .replay, from: live, redacting: redaction, fileID: fileID,
      filePath: filePath, line: line, column: column, environment: [:])
    return (mock, live)
  }

  static func request(
    _ string: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil
  ) -> URLRequest {
    var request = URLRequest(url: URL(string: string)!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = body.map { Data($0.utf8) }
    return request
  }

  /// The answer to `request`, synchronously (every mock here answers without delay).
  static func send(_ session: some HTTPSession, _ request: URLRequest) -> Answer {
    let box = Shared<Answer?>(nil)
    session.dataTask(with: request) { data, response, error in
      box.withLock { $0 = Answer(data: data, response: response as? HTTPURLResponse, error: error) }
    }.resume()
    return box.current ?? Answer(data: nil, response: nil, error: URLError(.unknown))
  }

  static func send(_ session: some HTTPSession, _ string: String) -> Answer {
    send(session, request(string))
  }

  struct Answer: Sendable {
    var data: Data?
    var response: HTTPURLResponse?
    var error: (any Error)?
    var status: Int? { response?.statusCode }
    var text: String { data.map { String(decoding: $0, as: UTF8.self) } ?? "" }
    var errorCode: URLError.Code? { (error as? URLError)?.code }
    func header(_ name: String) -> String? { response?.value(forHTTPHeaderField: name) }
  }

  /// The entries of a HAR document, parsed with JSONSerialization.
  static func entries(of data: Data) throws -> [[String: Any]] {
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let log = try #require(root["log"] as? [String: Any])
    return try #require(log["entries"] as? [[String: Any]])
  }

  /// A HAR document with these entries (JSON object texts).
  static func har(_ entries: String..., creator: String = "WebInspector") -> String {
    """
    {"log": {"version": "1.2", "creator": {"name": "\(creator)", "version": "1"},
     "pages": [], "entries": [\(entries.joined(separator: ",\n"))]}}
    """
  }

  /// One minimal entry: a request and a JSON or text response.
  static func entry(
    _ method: String, _ url: String, status: Int = 200, text: String = "", postData: String? = nil
  ) -> String {
    let post =
      postData.map { #", "postData": {"mimeType": "application/json", "text": \#(quoted($0))}"# }
      ?? ""
    return """
      {"startedDateTime": "2026-11-30T10:00:00.000Z", "time": 1,
       "request": {"method": "\(method)", "url": "\(url)", "httpVersion": "HTTP/1.1", "headers": [],
                   "queryString": [], "cookies": [], "headersSize": -1, "bodySize": -1\(post)},
       "response": {"status": \(status), "statusText": "", "httpVersion": "HTTP/1.1", "headers": [],
                    "cookies": [], "content": {"size": -1, "mimeType": "text/plain", "text": \(quoted(text))},
                    "redirectURL": "", "headersSize": -1, "bodySize": -1},
       "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
      """
  }

  static func quoted(_ text: String) -> String {
    let data = try? JSONSerialization.data(withJSONObject: [text])
    let array = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"\"]"
    return String(array.dropFirst().dropLast())
  }
}
