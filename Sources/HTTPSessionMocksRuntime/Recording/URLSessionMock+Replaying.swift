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
