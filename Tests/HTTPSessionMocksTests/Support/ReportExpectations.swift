import HTTPSessionMocks
import Testing

// The failure-path tests look at what the doubles report through the package's capture seam
// (`withCapturedReports`), so that a run of the suite records real issues only where a test proves
// the routing to Swift Testing end to end (FailureReportingTests).

/// Runs `body` and returns the reports made by the doubles it creates or calls, in order, without
/// judging them.
func capturedReports(_ body: () throws -> Void) rethrows -> [CapturedReport] {
  try withCapturedReports(body).1
}

/// Runs `body` and returns the reports made by the doubles it creates or calls, in order, without
/// judging them.
func capturedReports(_ body: () async throws -> Void) async rethrows -> [CapturedReport] {
  try await withCapturedReports(body).1
}

/// Runs `body`, which must make at least one report of `severity`, each of which `matching`
/// accepts (as `withKnownIssue(_:matching:)` demands of issues); records an issue for each report
/// that does not match, and one if there was none. Returns the reports.
@discardableResult
func expectReport(
  severity: CapturedReport.Severity = .failure, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () throws -> Void, matching: (CapturedReport) -> Bool = { _ in true }
) rethrows -> [CapturedReport] {
  let reports = try capturedReports(body)
  judge(reports, severity: severity, sourceLocation: sourceLocation, matching: matching)
  return reports
}

/// The asynchronous form of ``expectReport(severity:sourceLocation:_:matching:)``.
@discardableResult
func expectReport(
  severity: CapturedReport.Severity = .failure, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () async throws -> Void, matching: (CapturedReport) -> Bool = { _ in true }
) async rethrows -> [CapturedReport] {
  let reports = try await capturedReports(body)
  judge(reports, severity: severity, sourceLocation: sourceLocation, matching: matching)
  return reports
}

/// Runs `body`, which must make at least one report of `severity`, and every report it makes must
/// contain each of `fragments`. Returns the reports.
@discardableResult
func expectReport(
  containing fragments: String..., severity: CapturedReport.Severity = .failure,
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) rethrows -> [CapturedReport] {
  try expectReport(severity: severity, sourceLocation: sourceLocation, body) { report in
    fragments.allSatisfy(report.message.contains)
  }
}

/// The asynchronous form of ``expectReport(containing:severity:sourceLocation:_:)``.
@discardableResult
func expectReport(
  containing fragments: String..., severity: CapturedReport.Severity = .failure,
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async rethrows -> [CapturedReport] {
  try await expectReport(severity: severity, sourceLocation: sourceLocation, body) { report in
    fragments.allSatisfy(report.message.contains)
  }
}

/// Runs `body`, which must make at least one report, and returns their messages, in order (the
/// form for tests that look at the whole text).
func reportMessages(
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) rethrows -> [String] {
  try expectReport(sourceLocation: sourceLocation, body).map(\.message)
}

private func judge(
  _ reports: [CapturedReport], severity: CapturedReport.Severity, sourceLocation: SourceLocation,
  matching: (CapturedReport) -> Bool
) {
  if reports.isEmpty {
    Issue.record(
      "Expected a \(severity) report, but the doubles made none.", sourceLocation: sourceLocation)
  }
  for report in reports where report.severity != severity || !matching(report) {
    Issue.record("An unexpected report: \(report)", sourceLocation: sourceLocation)
  }
}
