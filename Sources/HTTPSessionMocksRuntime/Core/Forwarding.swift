import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hands a double's request to another session and relays what that session answers: how a
/// forwarding ``SpySession`` answers, a mock's `.passThrough` policy, and a proxied stub
/// (`StubResponse.proxy(to:through:addingHeaders:removingHeaders:)`).
///
/// A session that forwards (directly or through others) to itself would recurse until the
/// stack overflows, so each request counts the forwards it has passed through. Between our own
/// doubles the count travels with the request: the task a forward makes in a ``URLSessionMock``
/// or a ``SpySession`` carries it (``MockTask/forwardDepth``). Through any other session (one
/// that may call back into a double from its own code) it travels in a task-local value, bound
/// while that session's task resumes; binding one costs more than the rest of a forward, so it
/// is bound only there.
enum Forwarding {
  /// How many forwards through other sessions the current call chain is inside.
  @TaskLocal static var depth = 0

  /// The most forwards one request may pass through.
  static let maximumDepth = 16

  /// How many forwards led to `task`: the count it carries, or, for a task the code under test
  /// made, the count of the call chain it was resumed in.
  static func depth(of task: MockTask) -> Int {
    task.forwardDepth > 0 ? task.forwardDepth : depth
  }

  /// The core of `session` when it is one of our doubles, which a forward reaches directly.
  static func core(of session: any HTTPSession) -> SessionCore? {
    if let mock = session as? URLSessionMock { return mock.core }
    if let spy = session as? SpySession { return spy.core }
    return nil
  }

  /// Creates, in a double's `core`, the task that stands behind another double's task, as the
  /// double's own `HTTPSession` methods would, carrying the forward count `depth`; `relay` gets
  /// its answer (for a download, the file's bytes). It is not resumed yet.
  static func makeTask(
    _ kind: SessionEvent.TaskKind, _ request: URLRequest, in core: SessionCore, depth: Int,
    relay: ForwardRelay
  ) -> MockTask {
    let receiver: Receiver
    switch kind {
    case .data, .upload, .webSocket:
      // An upload's request already carries its body, as `uploadTask(with:from:)` sets it.
      // A WebSocket never gets here: the core refuses to forward one.
      receiver = .relay(relay)
    case .download:
      let handler = relay.handler
      receiver = .sink(
        DownloadSink(request: request, keepsFile: false) { file, response, error in
          relayDownload(file, response, error, to: handler)
        })
    }
    // A forward to one of our doubles comes in through its injected door.
    return core.enter(
      request, kind: kind, through: .injected, receiver: receiver, forwardDepth: depth)
  }

  /// Creates, in `session`, the task that stands behind a double's task; `relay` gets its
  /// answer (for a download, the file's bytes). It is not resumed yet.
  static func makeTask(
    _ kind: SessionEvent.TaskKind, _ request: URLRequest, in session: any HTTPSession,
    relay: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> any HTTPDataTask {
    switch kind {
    case .data, .webSocket:
      // The relay is the completion handler itself: no closure around it. (A WebSocket never
      // gets here: the core refuses to forward one.)
      return session.dataTask(with: request, completionHandler: relay)
    case .upload:
      return session.uploadTask(with: request, from: request.httpBody, completionHandler: relay)
    case .download:
      return session.downloadTask(with: request) { file, response, error in
        relayDownload(file, response, error, to: relay)
      }
    }
  }

  /// Relays a forwarded download's answer with the file's bytes: the forwarding session
  /// deletes its file when this returns.
  private static func relayDownload(
    _ file: URL?, _ response: URLResponse?, _ error: (any Error)?,
    to relay: @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) {
    let data = file.flatMap { try? Data(contentsOf: $0) }
    if file != nil, data == nil, error == nil {
      relay(nil, response, URLError(.cannotCreateFile))
    } else {
      relay(data, response, error)
    }
  }

  /// Resumes `task`, made in another session, `depth` forwards deep.
  static func resume(_ task: any HTTPDataTask, depth: Int) {
    $depth.withValue(depth) { task.resume() }
  }
}
