import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the server did with one request, as the `stub-server` command logs it: one line with
/// the method, the path, the status and the stub that answered (or why none did).
///
/// The server hands one to the observer given to `startServer(port:host:limits:observer:)`
/// when the mock has answered, before the answer is written to the client.
package struct ServedRequest: Sendable, CustomStringConvertible {
  /// How the exchange ended.
  package enum Outcome: Sendable, Equatable {
    /// An HTTP answer: its status, and the stub that gave it (`nil` when the mock's
    /// unmatched-request policy answered, or the server refused a WebSocket upgrade itself).
    case answered(status: Int?, by: String?)
    /// No stub matched: the client gets `404` with the near-miss report; `summary` is the
    /// closest stub and what differed, on one line.
    case unmatched(summary: String)
    /// Matching ran past its budget (`ServerLimits.maxMatchDuration`, `maxJSONPathValues`):
    /// the client gets `500` with the report; `summary` names the pattern, on one line.
    case overBudget(summary: String)
    /// A transport error ended it (a stub's `URLError` fault, a cancellation): the error, and
    /// the stub that gave it, if one did.
    case failed(error: String, by: String?)
  }

  /// The request's method.
  package let method: String
  /// The request's path and query, percent-encoded as sent.
  package let target: String
  /// How the exchange ended.
  package let outcome: Outcome

  /// `GET /users/octocat 200 GET /users/{login} (registered at main.swift:3)`, or
  /// `GET /nope 404 unmatched; closest: ...`, or `GET /x failed URLError(.timedOut) ...`.
  package var description: String {
    let head = "\(method) \(target)"
    switch outcome {
    case .answered(let status, let stub):
      return "\(head) \(status.map(String.init) ?? "-") \(stub ?? "(no stub)")"
    case .unmatched(let summary):
      return "\(head) 404 unmatched; \(summary)"
    case .overBudget(let summary):
      return "\(head) 500 over the match budget; \(summary)"
    case .failed(let error, let stub):
      return "\(head) failed \(error)" + (stub.map { " \($0)" } ?? "")
    }
  }
}

extension ServedRequest {
  init(_ request: URLRequest, _ end: ExchangeEnd, exchange: Exchange?, mock: URLSessionMock) {
    method = request.httpMethod ?? "GET"
    var target = "/"
    if let url = request.url, let parts = URLComponents(url: url, resolvingAgainstBaseURL: false) {
      target = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
      if let query = parts.percentEncodedQuery { target += "?" + query }
    }
    self.target = target
    switch end {
    case .complete, .upgraded:
      let status = exchange?.httpResponse?.statusCode
      outcome = .answered(status: status, by: exchange.flatMap(mock.stubName(answering:)))
    case .failed(let error):
      outcome = .failed(
        error: exchange?.errorSummary ?? String(describing: error),
        by: exchange.flatMap(mock.stubName(answering:)))
    case .unmatched(let unmatched) where unmatched.status == 500:
      // Matching ran past its budget: the patterns are not run again for the log line.
      let cause = unmatched.report.components(separatedBy: ". The request fails").first
      outcome = .overBudget(summary: cause ?? "matching ran past its budget")
    case .unmatched:
      outcome = .unmatched(summary: mock.nearMissSummary(for: request))
    }
  }
}
