import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Runs a double's task from an async method, with Swift task cancellation wired to
/// `cancel()`, as URLSession's async methods do.
enum AsyncBridge {
  typealias DataHandler = @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  typealias FileHandler = @Sendable (URL?, URLResponse?, (any Error)?) -> Void

  static func data(_ make: (@escaping DataHandler) -> MockTask) async throws -> (Data, URLResponse)
  {
    try await run { finish in
      make { data, response, error in
        finish(result(data ?? Data(), response, error))
      }
    }
  }

  static func file(_ make: (@escaping FileHandler) -> MockTask) async throws -> (URL, URLResponse) {
    try await run { finish in
      make { url, response, error in
        guard let url else {
          finish(.failure(error ?? URLError(.cannotCreateFile)))
          return
        }
        finish(result(url, response, error))
      }
    }
  }

  static func stream(
    _ make: (@escaping StreamSink.Head) -> MockTask
  ) async throws -> (HTTPByteStream, URLResponse) {
    try await run { finish in make(finish) }
  }

  private static func result<Value>(_ value: Value, _ response: URLResponse?, _ error: (any Error)?)
    -> Result<(Value, URLResponse), any Error>
  {
    if let error { return .failure(error) }
    guard let response else { return .failure(URLError(.badServerResponse)) }
    return .success((value, response))
  }

  private static func run<Value: Sendable>(
    _ make: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> MockTask
  ) async throws -> Value {
    let started = Locked<(task: MockTask?, cancelled: Bool)>((nil, false))
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let task = make { continuation.resume(with: $0) }
        let cancelled = started.withLock { started -> Bool in
          started.task = task
          return started.cancelled
        }
        if cancelled { task.cancel() } else { task.resume() }
      }
    } onCancel: {
      let task = started.withLock { started -> MockTask? in
        started.cancelled = true
        return started.task
      }
      task?.cancel()
    }
  }
}
