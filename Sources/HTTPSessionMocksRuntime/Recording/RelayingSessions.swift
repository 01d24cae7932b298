import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The sessions a replaying mock uses inside: the recorder that sends what is missing to the live
// session and writes it down, and the one that refuses to (under CI).

/// The unmatched-request policy of a recording mock: sends the request to the live session,
/// then writes the redacted exchange to the file and (in `.recordMissing`) replays it from then
/// on.
final class ReplayRecorder: RelayingSession {
  typealias DataTask = RelayTask
  typealias UploadTask = RelayTask
  typealias DownloadTask = RelayTask

  private let live: any HTTPSession
  private let file: URL
  private let redaction: Redaction
  private let mock: WeakReference<URLSessionMock>
  private let replaysRecorded: Bool
  /// The file as it was (kept byte for byte, custom fields and all) and what was recorded
  /// since.
  private let document: Locked<(original: Original?, recorded: [HARFormat.Entry])>

  /// A recording that was read, to append to.
  struct Original {
    let data: Data
    /// The byte offset of the `]` that closes its `log.entries`.
    let entriesEnd: Int
    /// How many entries it has.
    let count: Int
  }

  init(
    live: any HTTPSession, file: URL, redaction: Redaction, mock: WeakReference<URLSessionMock>,
    original: Original?, replaysRecorded: Bool
  ) {
    self.live = live
    self.file = file
    self.redaction = redaction
    self.mock = mock
    self.replaysRecorded = replaysRecorded
    self.document = Locked((original, []))
  }

  func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> RelayTask {
    RelayTask(
      live.dataTask(with: request) { [self] data, response, error in
        record(request, data, response, error)
        completionHandler(data, response, error)
      })
  }

  func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> RelayTask {
    var sent = request
    sent.httpBody = bodyData
    return RelayTask(
      live.uploadTask(with: request, from: bodyData) { [self, sent] data, response, error in
        record(sent, data, response, error)
        completionHandler(data, response, error)
      })
  }

  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> RelayTask {
    RelayTask(
      live.downloadTask(with: request) { [self] url, response, error in
        record(request, url.flatMap { try? Data(contentsOf: $0) }, response, error)
        completionHandler(url, response, error)
      })
  }

  /// Writes the exchange to the file and, in `.recordMissing`, adds the stub that replays it.
  private func record(
    _ request: URLRequest, _ data: Data?, _ response: URLResponse?, _ error: (any Error)?
  ) {
    guard
      let entry = HARFormat.recordedEntry(
        request, data: data, response: response, error: error, redacting: redaction,
        at: HARFormat.timestamp(Date()))
    else {
      mock.object?.core.reporter.warn(
        "\(request.summary) was sent to the live session but not recorded: its response is not "
          + "an HTTP response, and HAR records HTTP only.", at: siteOfMock)
      return
    }
    let (problem, number) = document.withLock { document -> (String?, Int) in
      document.recorded.append(entry)
      let number = (document.original?.count ?? 0) + document.recorded.count
      do {
        let data = try Self.document(original: document.original, appending: document.recorded)
        try FileManager.default.createDirectory(
          at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        // .atomic writes a temporary file beside this one, then renames it over this one.
        try data.write(to: file, options: .atomic)
        return (nil, number)
      } catch {
        return ("\(error)", number)
      }
    }
    if let problem {
      mock.object?.core.reporter.fail(
        "The exchange for \(request.summary) could not be written to \(file.lastPathComponent): "
          + problem, at: siteOfMock)
    }
    guard replaysRecorded, let mock = mock.object,
      let exact = RequestMatcher.exact(
        entry.request.method, entry.request.url, body: entry.request.body,
        mimeType: entry.request.mimeType)
    else { return }
    let matcher = RequestMatcher(
      exact.node,
      description: "\(HARFormat.origin(file.lastPathComponent, numbers: [number])) (\(exact))")
    let response = HARFormat.stubResponse(entry)
    let site = mock.core.ownerSite
    mock.core.withLock { state in
      _ = state.stubs.add(matcher, responder: .sequence([response]), site: site)
    }
  }

  private var siteOfMock: CallSite {
    mock.object?.core.ownerSite
      ?? CallSite(fileID: "HTTPSessionMocks", filePath: "HTTPSessionMocks", line: 0, column: 0)
  }

  /// The file's document with `recorded` appended to its entries (a fresh document when there
  /// was no file, or in `.record`). The file's own bytes stay as they were: the new entries go
  /// in before the `]` that closes `log.entries`, so nothing the reader does not read (custom
  /// fields, a number no parser can represent, a key given twice) is lost or rewritten.
  private static func document(original: Original?, appending recorded: [HARFormat.Entry])
    throws -> Data
  {
    guard let original else { return try HARFormat.encode(recorded) }
    var data = Data(original.data.prefix(original.entriesEnd))
    for (index, entry) in recorded.enumerated() {
      if original.count > 0 || index > 0 { data.append(UInt8(ascii: ",")) }
      data.append(UInt8(ascii: "\n"))
      var object = try HARFormat.serialize(HARFormat.object(for: entry))
      if object.last == UInt8(ascii: "\n") { object.removeLast() }
      data.append(object)
    }
    data.append(UInt8(ascii: "\n"))
    data.append(original.data.suffix(from: original.data.startIndex + original.entriesEnd))
    return data
  }
}

/// The unmatched-request policy of a mock that was asked to record on CI: fails each request
/// that would have been recorded, saying why.
final class RecordingRefusal: RelayingSession {
  typealias DataTask = RelayTask
  typealias UploadTask = RelayTask
  typealias DownloadTask = RelayTask

  private let mock: WeakReference<URLSessionMock>
  private let reason: String

  init(mock: WeakReference<URLSessionMock>, reason: String) {
    self.mock = mock
    self.reason = reason
  }

  private func refuse(
    _ request: URLRequest, _ deliver: @escaping @Sendable (URLError) -> Void
  ) -> RelayTask {
    RelayTask(
      FailingTask { [mock, reason] in
        if let mock = mock.object {
          let report = NearMiss.unmatchedReport(
            request, mock.nearMisses(for: request), voice: mock.core.voice,
            redaction: mock.core.reportRedaction)
          mock.core.reporter.fail(
            "\(request.summary) is not in the recording, and \(reason)\n\(report)",
            at: mock.core.ownerSite)
        }
        deliver(
          URLError(
            .resourceUnavailable, for: request,
            description: "not in the recording, and recording is refused because CI is set"))
      })
  }

  func dataTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> RelayTask {
    refuse(request) { completionHandler(nil, nil, $0) }
  }

  func uploadTask(
    with request: URLRequest, from bodyData: Data?,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> RelayTask {
    refuse(request) { completionHandler(nil, nil, $0) }
  }

  func downloadTask(
    with request: URLRequest,
    completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
  ) -> RelayTask {
    refuse(request) { completionHandler(nil, nil, $0) }
  }
}

/// A task of a session that stands in front of another: it resumes and cancels the task it
/// wraps.
final class RelayTask: HTTPDataTask {
  private let inner: any HTTPDataTask

  init(_ inner: any HTTPDataTask) {
    self.inner = inner
  }

  func resume() { inner.resume() }
  func cancel() { inner.cancel() }
  var state: URLSessionTask.State { inner.state }
  var taskIdentifier: Int { inner.taskIdentifier }
}

/// A task that runs `fail` once, on `resume()` or `cancel()`, whichever comes first.
final class FailingTask: HTTPDataTask {
  private let pending: Locked<(@Sendable () -> Void)?>
  let taskIdentifier = 0

  init(_ fail: @escaping @Sendable () -> Void) {
    pending = Locked(fail)
  }

  func resume() {
    let fail = pending.withLock { pending in
      defer { pending = nil }
      return pending
    }
    fail?()
  }

  func cancel() { resume() }

  var state: URLSessionTask.State {
    pending.withLock { $0 == nil ? .completed : .suspended }
  }
}

/// A session of the replaying mock (the recorder and the refusal) that implements the
/// completion-handler tasks for a request; the URL form and the async methods are written
/// once, here, over them.
protocol RelayingSession: HTTPSession
where DataTask == RelayTask, UploadTask == RelayTask, DownloadTask == RelayTask {}

extension RelayingSession {
  func dataTask(
    with url: URL,
    completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
  ) -> RelayTask {
    dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
  }

  func data(for request: URLRequest) async throws -> (Data, URLResponse) {
    try await Self.relay { dataTask(with: request, completionHandler: $0) }
  }

  func data(from url: URL) async throws -> (Data, URLResponse) {
    try await data(for: URLRequest(url: url))
  }

  func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
    try await Self.relay { uploadTask(with: request, from: bodyData, completionHandler: $0) }
  }

  func download(for request: URLRequest) async throws -> (URL, URLResponse) {
    let (data, response) = try await data(for: request)
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
    try data.write(to: url)
    return (url, response)
  }

  /// Runs the completion-handler task `make` builds, and hands back what it delivers.
  private static func relay(
    _ make: (@escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> RelayTask
  ) async throws -> (Data, URLResponse) {
    try await withCheckedThrowingContinuation { continuation in
      make { data, response, error in
        if let error {
          continuation.resume(throwing: error)
        } else if let response {
          continuation.resume(returning: (data ?? Data(), response))
        } else {
          continuation.resume(throwing: URLError(.badServerResponse))
        }
      }.resume()
    }
  }
}
