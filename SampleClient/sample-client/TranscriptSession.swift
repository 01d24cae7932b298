import Foundation
import HTTPSessionKit
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An `HTTPSession` that passes every call to a double and prints each answer when it arrives:
/// the virtual time, the request, the status or error, and what answered it, read from the
/// double's own record of the exchange.
///
/// It is a plain decorator over the `HTTPSession` seam, the same seam the doubles use, so it
/// keeps `base`'s own task types.
final class TranscriptSession<Base: RecordingSession>: HTTPSession {
  let base: Base
  let clock: VirtualClock
  let transcript: Transcript

  init(_ base: Base, clock: VirtualClock, transcript: Transcript) {
    self.base = base
    self.clock = clock
    self.transcript = transcript
  }

  func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> Base.DataTask {
    base.dataTask(with: request) { data, response, error in
      self.note(request, response, error)
      completionHandler(data, response, error)
    }
  }

  func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> Base.DataTask {
    base.dataTask(with: url) { data, response, error in
      self.note(URLRequest(url: url), response, error)
      completionHandler(data, response, error)
    }
  }

  func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> Base.UploadTask {
    base.uploadTask(with: request, from: bodyData) { data, response, error in
      self.note(request, response, error)
      completionHandler(data, response, error)
    }
  }

  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> Base.DownloadTask {
    base.downloadTask(with: request) { file, response, error in
      self.note(request, response, error)
      completionHandler(file, response, error)
    }
  }

  func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await noting(request) { try await base.data(for: request) }
  }

  func data(from url: URL) async throws -> (Data, URLResponse) {
    try await noting(URLRequest(url: url)) { try await base.data(from: url) }
  }

  func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
    try await noting(request) { try await base.upload(for: request, from: bodyData) }
  }

  func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    try await noting(request) { try await base.download(for: request) }
  }

  private func noting<Value>(
    _ request: URLRequest, _ call: () async throws -> (Value, URLResponse)
  ) async throws -> (Value, URLResponse) {
    do {
      let answer = try await call()
      note(request, answer.1, nil)
      return answer
    } catch {
      note(request, nil, error)
      throw error
    }
  }

  private func note(_ request: URLRequest, _ response: URLResponse?, _ error: (any Error)?) {
    let time = "t=\(format(clock.now))".padding(toLength: 6, withPad: " ", startingAt: 0)
    let url = request.url.map { $0.path + ($0.query.map { "?\($0)" } ?? "") } ?? "(no URL)"
    let outcome: String
    if let error {
      outcome = format(error)
    } else if let response = response as? HTTPURLResponse {
      outcome = "\(response.statusCode)"
    } else {
      outcome = "a response that is not HTTP"
    }
    // The double has recorded the exchange before the answer reaches the code under test.
    let exchanges = base.exchanges
    let method = request.httpMethod ?? "GET"
    let exchange = exchanges.last {
      $0.request.url == request.url && ($0.request.httpMethod ?? "GET") == method
    }
    let source: String
    if (error as? URLError)?.code == .cancelled {
      source = "cancelled by the client"
    } else if let stub = exchange?.stubMatcher, let answeredBy = exchange?.answeredBy {
      let call = exchanges.filter { $0.answeredBy == answeredBy }.count
      source = "stub \(stub)" + (call > 1 ? ", call \(call)" : "")
    } else if base.unmatchedRequests.isEmpty {
      source = "answered by the test"
    } else {
      source = "no stub"
    }
    transcript.line(
      "   \(time) \(request.httpMethod ?? "GET") \(url) → \(outcome)  [\(source)]")
  }
}
