import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// What a door that logs its requests (the `stub-server` command) asks the mock: why no stub
// answered, and how much of the journal to keep.
extension URLSessionMock {
  /// Bounds the journal, for a mock that a long-running server answers: from now on it keeps
  /// only the newest `count` requests and exchanges (see `ServerLimits.maxJournalExchanges`)
  /// and cuts request and response bodies longer than `bodyBytes`. A tighter bound than an
  /// earlier one wins; a mock that no server serves keeps everything.
  package func boundJournal(toLast count: Int, bodyBytes: Int) {
    core.withLock { $0.records.bound(toLast: count, bodyBytes: bodyBytes) }
  }

  /// Sets how much work matching one request may take (a served mock's
  /// `ServerLimits.maxMatchDuration` and `maxJSONPathValues`).
  package func limitMatching(_ limits: MatchLimits) {
    core.withLock { $0.matchLimits = limits }
  }

  /// Runs `probe` on the thread that matches a request, each time a regular expression matched
  /// under a budget reports progress (every few thousand steps): for tests that act while a
  /// slow match runs.
  package func probeMatching(_ probe: @escaping @Sendable () -> Void) {
    core.withLock { $0.matchProbe = probe }
  }

  /// Empties the journal (the admin API's `POST /__admin/requests/reset`): requests, events,
  /// exchanges and unmatched requests all go; a bound set by ``boundJournal(toLast:bodyBytes:)``
  /// stays, and the count that ``waitForRequests(count:timeout:fileID:filePath:line:column:)``
  /// waits on goes on counting.
  package func resetJournal() {
    let removed = core.withLock { state in
      defer { state.records.removeAll() }
      return state.records
    }
    // Released here, outside the lock: a request body may be a large buffer.
    withExtendedLifetime(removed) {}
  }

  /// How many requests the mock has settled so far (the count
  /// ``waitForRequests(count:timeout:fileID:filePath:line:column:)`` waits on); it only grows.
  package var settledRequestCount: Int { core.withLock { $0.settledCount } }

  /// Waits until `count` requests have settled, like
  /// ``waitForRequests(count:timeout:fileID:filePath:line:column:)`` but reporting nothing:
  /// throws ``WaitTimeoutError`` when `timeout` of real time passes first, and
  /// `CancellationError` when the waiting task is cancelled. For a door that waits on its
  /// client's behalf (the admin API's `POST /__admin/requests/wait`) and answers the client
  /// itself.
  package func waitUntilSettled(count: Int, timeout: Duration) async throws {
    try await journal.waitForSettled(
      count: count, timeout: timeout,
      timedOut: {
        WaitTimeoutError(
          wait: "waitUntilSettled(count: \(count))",
          message: "Fewer than \(count) requests settled within \(timeout).")
      })
  }

  /// The stubs closest to `request`, closest first, at most `limit` of them, as WireMock's
  /// near-miss list gives them: each stub's ``Stub/identifier`` (to find the mapping it came
  /// from), a distance in `0...1` (0 when it matches; the near-miss ranking's summed weight `w`
  /// of what differed, as `w / (w + 1)`, so the order is the ranking's), and a line naming the
  /// stub (as the mock's ``ReportVoice`` names stubs) with what differed.
  package func nearMissDistances(for request: URLRequest, limit: Int) -> [(
    stub: Int, distance: Double, report: String
  )] {
    let (stubs, redaction) = core.withLock { ($0.stubs, $0.reportRedaction) }
    let ranked = stubs.rankedNearMisses(for: request, redacting: redaction)
    return ranked.prefix(max(0, limit)).map { miss in
      let weight = max(0, miss.distance)
      var report = core.voice.name(
        miss.definition.matcher.description(redacting: redaction),
        registeredAt: miss.definition.site)
      if !miss.reasons.isEmpty { report += ": " + miss.reasons.joined(separator: "; ") }
      return (
        miss.definition.id, weight / (weight + 1),
        report.replacingOccurrences(of: "\n", with: " ")
      )
    }
  }

  /// The closest stub to `request` and what differed, on one line:
  /// `closest: GET /users/{login} (registered at T.swift:3): path "/user/x" ...` (the stub
  /// named as the mock's ``ReportVoice`` names it); or `the mock has no stubs`.
  package func nearMissSummary(for request: URLRequest) -> String {
    let misses = nearMisses(for: request)
    guard let closest = misses.first else { return core.voice.noStubsSummary }
    let name = core.voice.name(
      closest.definition.matcher.description(redacting: core.reportRedaction),
      registeredAt: closest.definition.site)
    var text = "closest: \(name)"
    if !closest.reasons.isEmpty {
      text += ": " + closest.reasons.joined(separator: "; ")
    }
    if misses.count > 1 { text += " (\(misses.count - 1) more stubs)" }
    return text.replacingOccurrences(of: "\n", with: " ")
  }
}

extension Stub {
  /// The stub's number in its mock, as ``URLSessionMock/nearMissDistances(for:limit:)`` gives
  /// it: unique among the mock's stubs.
  package var identifier: Int { id }
}

extension URLSessionMock {
  /// The stub that answered `exchange`, named as the mock's ``ReportVoice`` names stubs
  /// (``Exchange/answeredBy`` with or without the site); `nil` when no stub did.
  package func stubName(answering exchange: Exchange) -> String? {
    core.voice.citesStubSites ? exchange.answeredBy : exchange.stubMatcher?.description
  }
}

extension Exchange {
  /// The error that ended the exchange, as reports name it (`URLError(.timedOut)`), or `nil`.
  package var errorSummary: String? { error.map(ErrorText.describe) }
}
