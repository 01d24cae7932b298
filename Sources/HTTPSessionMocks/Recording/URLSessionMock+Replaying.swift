import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSessionMock {
  /// Creates a mock that replays the HAR file at `file`, and records into it what it lacks:
  /// the VCR workflow in one line.
  ///
  /// ```swift
  /// let mock = try URLSessionMock(
  ///   replaying: fixtures.appendingPathComponent("users.har"), mode: .recordMissing,
  ///   from: URLSession.shared, redacting: .default)
  /// client.session = mock
  /// ```
  ///
  /// - ``ReplayMode/replay``: answers from the file only and never touches `liveSession`; a
  ///   request the file does not have is an unmatched request, reported with the usual
  ///   near-miss table. The file must exist.
  /// - ``ReplayMode/recordMissing``: answers what the file has, sends every other request to
  ///   `liveSession`, appends the exchange to the file and replays it from then on.
  /// - ``ReplayMode/record``: sends everything to `liveSession` and rewrites the file.
  ///
  /// The file is written atomically after each recorded exchange (to a temporary file that
  /// then replaces it), so a test that crashes loses nothing already recorded. What is
  /// recorded is redacted by `redaction` first, and redaction is symmetric: each request is
  /// redacted the same way before it is matched against the file, so a request that carries a
  /// real token matches the recording that carries `REDACTED` (stubs added in code see the
  /// redacted request too; the journal keeps the request as sent). Entries replay as HAR
  /// entries do in a ``MockBundle``: by method and exact URL (and body, when recorded), identical
  /// requests in recorded order, the last repeating.
  ///
  /// `environment` (last, so that tests can pin it) decides over `mode`: `HTTPSESSIONKIT_RECORD`
  /// set to `none`, `missing` or `all` selects ``ReplayMode/replay``, ``ReplayMode/recordMissing``
  /// or ``ReplayMode/record`` without a code change; when `CI` is set (to anything but empty,
  /// `0` or `false`), recording is refused and the mode is ``ReplayMode/replay``: a request that
  /// would have been recorded fails the test with a message that says so, and a missing file is
  /// not an error.
  ///
  /// > Important: Recorded requests reach `liveSession` through the mock's
  /// > ``unmatchedRequestPolicy`` (a pass-through to a recorder); setting that property turns
  /// > recording off.
  ///
  /// Throws a ``MockBundleError`` when the file is malformed, when it is missing in
  /// ``ReplayMode/replay`` (outside CI), and when `HTTPSESSIONKIT_RECORD` holds another value.
  public convenience init(
    replaying file: URL, mode: ReplayMode, from liveSession: some HTTPSession,
    redacting redaction: Redaction = .default, clock: (any Clock<Duration>)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column, environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws {
    let plan = try ReplayPlan(file: file, mode: mode, environment: environment)
    self.init(
      clock: clock, voice: .replaying(plan.name), fileID: fileID, filePath: filePath, line: line,
      column: column)
    let stubs =
      plan.mode == .record
      ? [] : HARFormat.bundle(from: plan.document?.entries ?? [], name: plan.name).entries
    let site = core.ownerSite
    core.withLock { state in
      if !redaction.isEmpty {
        state.stubs.registry.requestTransform = { redaction.redact($0) }
      }
      for entry in stubs {
        // Named as a loaded bundle's stubs are: `session.har entry 3 (POST https://...)`.
        let matcher = RequestMatcher(entry.matcher.node, description: entry.label)
        _ = state.stubs.add(matcher, responder: .sequence(entry.responses), site: site)
      }
    }
    if stubs.count >= FreedMemory.largeLoad { FreedMemory.returnToSystem() }
    if let refusal = plan.refusal {
      unmatchedRequestPolicy = .passThrough(
        to: RecordingRefusal(mock: WeakReference(self), reason: refusal))
    } else if plan.mode != .replay {
      unmatchedRequestPolicy = .passThrough(
        to: ReplayRecorder(
          live: liveSession, file: file, redaction: redaction, mock: WeakReference(self),
          original: plan.mode == .recordMissing ? plan.original : nil,
          replaysRecorded: plan.mode == .recordMissing))
    }
  }
}

/// What a replaying mock does, decided from the code's mode, the environment and the file.
struct ReplayPlan {
  var mode: ReplayMode
  /// Why recording was refused (CI), if it was.
  var refusal: String?
  /// The file's name, for reports.
  var name: String
  /// The file as read, if it was.
  var document: HARFormat.Document?

  /// What a recorder appends to: the file's bytes, where its entries end, and how many it has.
  var original: ReplayRecorder.Original? {
    guard let document else { return nil }
    return ReplayRecorder.Original(
      data: document.utf8, entriesEnd: document.entriesEnd, count: document.entries.count)
  }

  init(file: URL, mode requested: ReplayMode, environment: [String: String]) throws {
    name = file.lastPathComponent
    mode = requested
    var source = "mode .\(requested.rawValue)"
    if let value = environment["HTTPSESSIONKIT_RECORD"]?.trimmingCharacters(in: .whitespaces),
      !value.isEmpty
    {
      guard
        let chosen = ReplayMode.allCases.first(where: { $0.environmentValue == value.lowercased() })
      else {
        throw MockBundleError(
          .malformed, source: "HTTPSESSIONKIT_RECORD",
          "expected none, missing or all, got \"\(value)\"")
      }
      mode = chosen
      source = "HTTPSESSIONKIT_RECORD=\(value)"
    }
    if let ci = environment["CI"], !["", "0", "false"].contains(ci.lowercased()), mode != .replay {
      refusal =
        "recording is refused because CI is set (CI=\(ci)): the mock only replays \(name) "
        + "although \(source) asks to record. Record on a developer machine (run the test "
        + "with HTTPSESSIONKIT_RECORD=missing) and commit the file."
      mode = .replay
    }
    guard mode != .record else { return }
    if FileManager.default.fileExists(atPath: file.path) {
      let data: Data
      do {
        data = try Data(contentsOf: file)
      } catch {
        throw MockBundleError(.unreadable, source: name, "could not be read: \(error)")
      }
      document = try HARFormat.document(data, source: name)
    } else if mode == .replay, refusal == nil {
      throw MockBundleError(
        .unreadable, source: file.path,
        "there is no recording to replay here; record it once with mode .recordMissing, or "
          + "run the test with HTTPSESSIONKIT_RECORD=missing")
    }
  }
}

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
