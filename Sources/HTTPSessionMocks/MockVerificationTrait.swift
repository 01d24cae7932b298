// TestScoping, which the trait adopts, came with Swift 6.1 (Xcode 16.3).
#if canImport(Testing) && compiler(>=6.1)
  import Testing

  /// A Swift Testing trait that verifies every double a test creates when the test ends: every
  /// `URLSessionMock` stub answered at least once, no request was left to the
  /// unmatched-request policy, every task was resumed (or cancelled), and no `SpySession`
  /// still holds a task the test never completed.
  ///
  /// ```swift
  /// @Test(.verifyingMocks) func createsIssue() async throws {
  ///   let mock = URLSessionMock()
  ///   mock.stub(.post("/repos/{owner}/{repo}/issues"), with: .status(201))
  ///   try await client(mock).createIssue(title: "Bug")
  /// }
  /// ```
  ///
  /// Applied to a suite, it verifies each of the suite's tests. It works like
  /// `withMockVerification(_:)`
  /// around the test body, and has the same limits: mocks created in detached tasks are not seen.
  public struct MockVerificationTrait: TestTrait, SuiteTrait, TestScoping {
    /// Creates the trait; `@Test(.verifyingMocks)` is the usual spelling.
    public init() {}

    /// Applies to each test of a suite, not once to the suite as a whole.
    public var isRecursive: Bool { true }

    /// Runs the test, then verifies the mocks it created, reporting at the test's location.
    public func provideScope(
      for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
      guard testCase != nil || !test.isSuite else {
        try await function()
        return
      }
      let scope = MockVerificationScope()
      try await MockVerificationScope.$current.withValue(scope) { try await function() }
      let location = test.sourceLocation
      scope.verify(
        at: CallSite(
          fileID: location.fileID, filePath: location.filePath, line: location.line,
          column: location.column))
    }
  }

  extension Trait where Self == MockVerificationTrait {
    /// Verifies every double the test creates when it ends: every stub used, no request left
    /// to the unmatched-request policy, no forgotten `resume()`, no task left in a spy.
    public static var verifyingMocks: MockVerificationTrait { MockVerificationTrait() }
  }
#endif
