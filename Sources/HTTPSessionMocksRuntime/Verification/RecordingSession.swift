import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A double that records what it sees: ``URLSessionMock`` and ``SpySession``.
///
/// Its queries and verifications are the same code for both, over the ``journal`` each keeps;
/// they are the one way to read it:
///
/// ```swift
/// mock.verify(.get("/users/octocat"), called: .once)
/// spy.verifyInOrder([.post("/login"), .get("/me")])
/// let sent = mock.requests(matching: .get("/users/{login}"))
/// try await mock.waitForRequests(count: 2)
/// ```
///
/// Every verification reports a failure at the caller's line in whichever test framework runs
/// (Swift Testing or XCTest), and returns whether it passed.
public protocol RecordingSession: HTTPSession {
  /// The double's record of what it saw, which the members below read.
  ///
  /// A ``RequestJournal`` has no public members: read it through the double, as
  /// `mock.requests`, `mock.verify(...)`.
  var journal: RequestJournal { get }
}

extension RecordingSession {
  /// The requests sent, in the order their tasks were resumed, bodies included.
  ///
  /// A task that was created but never resumed sent nothing and is not here; see ``events``.
  /// A mock that a loopback server serves keeps only the newest requests (see
  /// ``RequestJournal``).
  public var requests: [URLRequest] { journal.requests }

  /// The whole call log: every task's creation, resume, cancellation and completion.
  public var events: [SessionEvent] { journal.events }

  /// Which header values this double's failure reports mask: ``ReportRedaction/default``
  /// (credentials, cookies, tokens) unless set.
  ///
  /// ```swift
  /// mock.reportRedaction = .none  // show every header as sent
  /// ```
  public var reportRedaction: ReportRedaction {
    get { journal.core.reportRedaction }
    nonmutating set { journal.core.reportRedaction = newValue }
  }

  /// The sent requests that `matcher` accepts, in order.
  public func requests(matching matcher: RequestMatcher) -> [URLRequest] {
    journal.requests(matching: matcher)
  }

  /// Checks how many sent requests match `matcher` (default: exactly once).
  ///
  /// On failure the report lists every sent request, the matching ones first and then the
  /// others closest first, each with what differed.
  ///
  /// > Tip: Call it as a statement: it reports its own failure. Wrapped in `#expect` or
  /// > `XCTAssertTrue`, a failure is reported twice.
  @discardableResult
  public func verify(
    _ matcher: RequestMatcher, called count: CallCount = .once, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    journal.verify(
      matcher, called: count, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Checks that requests matching `matchers` were sent in this relative order; other requests
  /// may come between them.
  @discardableResult
  public func verifyInOrder(
    _ matchers: [RequestMatcher], fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) -> Bool {
    journal.verifyInOrder(matchers, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Checks that every task created was resumed or cancelled: a forgotten `resume()` fails.
  @discardableResult
  public func verifyAllTasksResumed(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    journal.verifyAllTasksResumed(fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Suspends until at least `count` requests have been sent.
  ///
  /// This is the hand-shake with code that sends requests from its own Swift tasks: no polling,
  /// no sleeps. If `timeout` of real time passes first, the wait is reported as a test failure
  /// at the caller's line and throws ``WaitTimeoutError``; cancelling the waiting task throws
  /// `CancellationError`.
  ///
  /// ```swift
  /// let load = Task { await viewModel.load() }
  /// try await mock.waitForRequests(count: 1)
  /// ```
  public func waitForRequests(
    count: Int, timeout: Duration = .seconds(5), fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) async throws {
    try await journal.waitForRequests(
      count: count, timeout: timeout, fileID: fileID, filePath: filePath, line: line,
      column: column)
  }
  /// Suspends until at least `count` exchanges have ended: completed, failed, or ended by
  /// the client.
  ///
  /// An exchange ends, and is recorded in ``exchanges``, when the code has its whole answer,
  /// when it fails, or when the client leaves: a task cancelled, a stream left early, a
  /// connection to the loopback server closed. This is the hand-off for what happens away
  /// from the test's task, most of all the end of a stream: the client's close reaches the
  /// mock on the loopback server's thread, so read ``Exchange/endedByClient`` after this wait,
  /// and advance the clock only after it (a piece released before the close reached the mock
  /// counts as delivered). If `timeout` of real time passes first, the wait is reported as a
  /// test failure at the caller's line, naming the exchanges still open, and throws
  /// ``WaitTimeoutError``; cancelling the waiting task throws `CancellationError`.
  ///
  /// ```swift
  /// await clock.advance(by: .seconds(1))  // the first event
  /// // ... the client reads it, then closes its connection
  /// try await mock.waitForExchanges(count: 1)
  /// #expect(mock.exchanges[0].endedByClient)
  /// #expect(mock.exchanges[0].pieces.count == 1)  // it left after the first event
  /// ```
  ///
  /// It counts every exchange since the double was made, also those that the bounded journal
  /// of a served mock no longer keeps.
  public func waitForExchanges(
    count: Int, timeout: Duration = .seconds(5), fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) async throws {
    try await journal.waitForExchanges(
      count: count, timeout: timeout, fileID: fileID, filePath: filePath, line: line,
      column: column)
  }
}

extension RecordingSession {
  /// What answered each request, in the order the answers arrived: the response head, the
  /// body, the stub that answered and the door the request came through.
  public var exchanges: [Exchange] { journal.exchanges }

  /// The requests that no stub matched, in order (always empty for a ``SpySession``).
  public var unmatchedRequests: [URLRequest] { journal.unmatchedRequests }

  /// Checks that every request was answered by a stub, and reports those that were not.
  ///
  /// A ``SpySession`` has no stubs and never leaves a request unmatched, so it always passes.
  @discardableResult
  public func verifyNoUnmatchedRequests(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) -> Bool {
    journal.verifyNoUnmatchedRequests(
      fileID: fileID, filePath: filePath, line: line, column: column)
  }
}
