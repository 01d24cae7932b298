import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hands a double's request to another session and relays what that session answers: how a
/// forwarding ``SpySession`` answers, and a mock's `.passThrough` policy.
enum Forwarding {
  /// How many forwards the current synchronous call chain is inside: a session that forwards
  /// (directly or through others) to itself would otherwise recurse until the stack overflows.
  @TaskLocal static var depth = 0

  /// The most forwards one request may pass through.
  static let maximumDepth = 16

  /// Whether one more forward would pass ``maximumDepth``.
  static var isTooDeep: Bool { depth >= maximumDepth }

  /// Creates, in `session`, the task that stands behind a double's task; `relay` gets its
  /// answer (for a download, the file's bytes). It is not resumed yet.
  static func makeTask(
    _ kind: SessionEvent.TaskKind, _ request: URLRequest, in session: any HTTPSession,
    relay: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> any HTTPDataTask {
    switch kind {
    case .data:
      // The relay is the completion handler itself: no closure around it.
      return session.dataTask(with: request, completionHandler: relay)
    case .upload:
      return session.uploadTask(with: request, from: request.httpBody, completionHandler: relay)
    case .download:
      return session.downloadTask(with: request) { file, response, error in
        // The forwarding session deletes its file when this returns: keep the bytes.
        let data = file.flatMap { try? Data(contentsOf: $0) }
        if file != nil, data == nil, error == nil {
          relay(nil, response, URLError(.cannotCreateFile))
        } else {
          relay(data, response, error)
        }
      }
    }
  }

  /// Resumes `task` one forward deeper.
  static func resume(_ task: any HTTPDataTask) {
    $depth.withValue(depth + 1) { task.resume() }
  }
}
