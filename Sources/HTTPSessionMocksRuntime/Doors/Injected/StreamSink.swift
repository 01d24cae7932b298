import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The injected door's sink for ``RecordingSession/stream(for:)``: the head resumes the waiting
/// call with an `HTTPByteStream`, each piece of the body goes into it as the core delivers it
/// (a dribbled or event-stream body piece by piece on the mock's clock, any other body whole),
/// and the end finishes it. Leaving the stream early cancels the task.
final class StreamSink: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: the core never calls a sink concurrently, and its calls come after
  // `task` is set (before the task is resumed); `head` and `body` are only touched in those
  // calls.
  typealias Head = @Sendable (Result<(HTTPByteStream, URLResponse), any Error>) -> Void

  private var head: Head?
  private var body: AsyncThrowingStream<Data, any Error>.Continuation?
  /// The task this sink answers, for the stream's cancellation; held weakly, so that a stream
  /// kept after its answer keeps no task alive.
  weak var task: MockTask?

  init(_ head: @escaping Head) {
    self.head = head
  }

  func receive(_ response: URLResponse) {
    let (chunks, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    body = continuation
    let stream = HTTPByteStream(chunks, onCancel: { [weak task] in task?.cancel() })
    let head = self.head
    self.head = nil
    head?(.success((stream, response)))
  }

  func receive(_ piece: Data) {
    if !piece.isEmpty { body?.yield(piece) }
  }

  func finish(_ end: ExchangeEnd) {
    let error: (any Error)?
    switch end {
    case .complete: error = head == nil ? nil : URLError(.badServerResponse)
    case .failed(let failure): error = failure
    case .unmatched(let unmatched): error = unmatched.error
    case .upgraded(let conversation): error = conversation.refuse()
    }
    if let head {
      self.head = nil
      head(.failure(error ?? URLError(.badServerResponse)))
    }
    body?.finish(throwing: error)
    body = nil
  }
}
