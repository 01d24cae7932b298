/// Runs `body`, then verifies every double created inside it: every ``URLSessionMock`` stub
/// answered at least once, no request was left to the unmatched-request policy, every task was
/// resumed (or cancelled), and no ``SpySession`` still holds a task the test never completed.
///
/// ```swift
/// @Test func loadsProfile() async throws {
///   try await withMockVerification {
///     let mock = URLSessionMock()
///     mock.stub(.get("/users/{login}"), with: .json(user))
///     let client = APIClient(session: mock)
///     _ = try await client.fetchUser("octocat")
///   }  // fails here if a stub went unused or a request matched nothing
/// }
/// ```
///
/// Requests that already failed the test as unmatched (the default policy) are not reported a
/// second time; requests answered by ``UnmatchedRequestPolicy/respond(with:)`` or
/// ``UnmatchedRequestPolicy/passThrough(to:)`` are. In Swift Testing, the
/// `MockVerificationTrait` trait of `HTTPSessionMocks` (`@Test(.verifyingMocks)`) does the same for a whole test.
///
/// > Important: Mocks are found through a task-local value, so a mock created in a detached
/// > task or on another thread inside `body` is not verified. Create mocks in the test's task.
public func withMockVerification<Result>(
  fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
  column: UInt = #column, _ body: () async throws -> Result
) async rethrows -> Result {
  let scope = MockVerificationScope()
  let result = try await MockVerificationScope.$current.withValue(scope) { try await body() }
  scope.verify(at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  return result
}

/// Runs `body`, then verifies every ``URLSessionMock`` created inside it; the synchronous form
/// of `withMockVerification(_:)`.
public func withMockVerification<Result>(
  fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
  column: UInt = #column, _ body: () throws -> Result
) rethrows -> Result {
  let scope = MockVerificationScope()
  let result = try MockVerificationScope.$current.withValue(scope) { try body() }
  scope.verify(at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  return result
}

/// The mocks created inside one `withMockVerification(_:)`
/// call or one test with the `MockVerificationTrait` trait of `HTTPSessionMocks`.
package final class MockVerificationScope: Sendable {
  @TaskLocal package static var current: MockVerificationScope?

  private let doubles = Locked<[any VerifiedDouble]>([])

  package init() {}

  func register(_ double: some VerifiedDouble) {
    doubles.withLock { $0.append(double) }
  }

  /// Reports, for each double, what it found wrong: one loop for every kind of double.
  package func verify(at site: CallSite) {
    for double in doubles.withLock({ $0 }) {
      let problems = double.automaticVerificationProblems()
      guard !problems.isEmpty else { continue }
      let core = double.journal.core
      core.reporter.fail(
        "The \(core.ownerName) created at \(core.ownerSite) did not verify:\n"
          + problems.joined(separator: ""), at: site)
    }
  }
}

/// A double that automatic verification checks.
protocol VerifiedDouble: RecordingSession {
  /// What is wrong at the end of a test, each problem a paragraph; empty when nothing is.
  func automaticVerificationProblems() -> [String]
}

extension URLSessionMock: VerifiedDouble {
  func automaticVerificationProblems() -> [String] {
    var problems: [String] = []
    if let unused = unusedStubsMessage() { problems.append(unused) }
    let unmatched = journal.unreportedUnmatchedRequests
    if !unmatched.isEmpty {
      problems.append(
        "\(unmatched.count) request(s) matched no stub and were answered by the mock's "
          + "unmatched-request policy:\n"
          + NearMiss.numberedList(unmatched, core.reportRedaction))
    }
    if let unresumed = journal.unresumedTasksMessage() { problems.append(unresumed) }
    return problems
  }
}

extension SpySession: VerifiedDouble {
  func automaticVerificationProblems() -> [String] {
    var problems: [String] = []
    let held = pendingTasks
    if !held.isEmpty {
      problems.append(
        "\(held.count) task(s) are still held, never completed by the test:\n"
          + held.map { "  \($0)\n" }.joined())
    }
    if let unresumed = journal.unresumedTasksMessage() { problems.append(unresumed) }
    return problems
  }
}
