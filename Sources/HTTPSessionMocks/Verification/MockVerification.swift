/// Runs `body`, then verifies every ``URLSessionMock`` created inside it: no request went
/// unmatched, and every stub answered at least once.
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
/// ``MockVerificationTrait`` trait (`@Test(.verifyingMocks)`) does the same for a whole test.
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
/// call or one test with the ``MockVerificationTrait`` trait.
final class MockVerificationScope: Sendable {
  @TaskLocal static var current: MockVerificationScope?

  private let mocks = Locked<[URLSessionMock]>([])

  func register(_ mock: URLSessionMock) {
    mocks.withLock { $0.append(mock) }
  }

  func verify(at site: CallSite) {
    for mock in mocks.withLock({ $0 }) {
      var problems: [String] = []
      if let unused = mock.unusedStubsMessage() { problems.append(unused) }
      let unmatched = mock.journal.unreportedUnmatchedRequests
      if !unmatched.isEmpty {
        problems.append(
          "\(unmatched.count) request(s) matched no stub and were answered by the mock's "
            + "unmatched-request policy:\n" + NearMiss.numberedList(unmatched))
      }
      guard !problems.isEmpty else { continue }
      mock.journal.reporter.fail(
        "The URLSessionMock created at \(mock.site) did not verify:\n"
          + problems.joined(separator: ""), at: site)
    }
  }
}
