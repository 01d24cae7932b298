import Foundation
import HTTPSessionKit
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What one request's answer looked like to the code, through whichever door.
struct Seen: Equatable {
  var status: Int?
  var headers: [String: String]
  var body: Data?
  var errorCode: URLError.Code?
  var url: URL?

  /// Sends `request` through `session` and notes what came back.
  static func sending(_ request: URLRequest, through session: any HTTPSession) async -> Seen {
    do {
      let (data, response) = try await session.data(for: request)
      let http = response as? HTTPURLResponse
      var headers: [String: String] = [:]
      for (key, value) in http?.allHeaderFields ?? [:] {
        if let key = key as? String, let value = value as? String {
          headers[key.lowercased()] = value
        }
      }
      return Seen(
        status: http?.statusCode, headers: headers, body: data, errorCode: nil, url: response.url)
    } catch {
      return Seen(
        status: nil, headers: [:], body: nil, errorCode: (error as? URLError)?.code, url: nil)
    }
  }
}

/// A request from its parts.
func request(
  _ method: String, _ string: String, headers: [String: String] = [:], body: Data? = nil
) -> URLRequest {
  var request = URLRequest(url: URL(string: string)!)
  request.httpMethod = method
  for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
  request.httpBody = body
  return request
}

/// Collects what a URLSession data delegate sees, from the session's delegate queue.
final class DelegateLog: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // @unchecked Sendable: every field is behind `lock`; the streams' continuations are
  // thread-safe.
  private let lock = NSLock()
  private var responses: [URLResponse] = []
  private var pieces: [Data] = []
  private var completions: [(any Error)?] = []
  let finished: AsyncStream<(any Error)?>
  private let finishOutlet: AsyncStream<(any Error)?>.Continuation

  override init() {
    (finished, finishOutlet) = AsyncStream<(any Error)?>.makeStream()
    super.init()
  }

  var receivedResponses: [URLResponse] { lock.withLock { responses } }
  var receivedPieces: [Data] { lock.withLock { pieces } }
  var completionCount: Int { lock.withLock { completions.count } }

  /// Waits for the next `didCompleteWithError`, and returns its error.
  func nextCompletion() async -> (any Error)? {
    var iterator = finished.makeAsyncIterator()
    return await iterator.next() ?? nil
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    lock.withLock { responses.append(response) }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    lock.withLock { pieces.append(data) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    lock.withLock { completions.append(error) }
    finishOutlet.yield(error)
  }
}

/// An input stream that makes its bytes as they are read (a repeating pattern), so that a test
/// can offer a huge body without allocating it.
final class PatternStream: InputStream {
  private let total: Int
  private var produced = 0
  private var status: Stream.Status = .notOpen
  /// How many bytes were read from the stream.
  var bytesRead: Int { produced }

  init(byteCount: Int) {
    total = byteCount
    super.init(data: Data())
  }

  override func open() { status = .open }
  override func close() { status = .closed }
  override var streamStatus: Stream.Status { status }
  override var hasBytesAvailable: Bool { produced < total }
  override var streamError: (any Error)? { nil }

  override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
    let count = min(length, total - produced)
    buffer.update(repeating: UInt8(truncatingIfNeeded: produced >> 16), count: count)
    produced += count
    if produced == total { status = .atEnd }
    return count
  }

  override func getBuffer(
    _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
    length len: UnsafeMutablePointer<Int>
  ) -> Bool { false }

}
