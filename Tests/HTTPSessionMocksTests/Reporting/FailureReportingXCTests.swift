import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(XCTest)
  import XCTest
#endif

/// The API client of the seed example, as a user writes it.
private final class ProfileClient: @unchecked Sendable {
  // @unchecked Sendable: `session` is assigned once by the test before any call.
  struct User: Decodable, Equatable {
    var login: String
    var id: Int
  }

  lazy var session: any HTTPSession = URLSession.shared

  func fetchProfile(name: String, completion: @escaping @Sendable (User?, (any Error)?) -> Void) {
    let url = URL(string: "https://api.github.com/users/\(name)")!
    let task = session.dataTask(with: url) { data, _, error in
      guard let data else { return completion(nil, error) }
      completion(try? JSONDecoder().decode(User.self, from: data), nil)
    }
    task.resume()
  }

  func profile(name: String) async throws -> User {
    let url = URL(string: "https://api.github.com/users/\(name)")!
    let (data, _) = try await session.data(from: url)
    return try JSONDecoder().decode(User.self, from: data)
  }
}

#if canImport(XCTest)
  /// A double's failures reach XCTest through `XCTFail`, at the test's own line; and the doubles
  /// need no expectations in XCTest either.
  final class FailureReportingXCTests: FailureCapturingTestCase {
    private let url = URL(string: "https://api.example.com/users/octocat")!

    // MARK: - Failures go through XCTFail

    func testAnUnmatchedRequestFailsAtTheLineThatMadeTheMock() throws {
      let (mock, mockLine) = (URLSessionMock(), #line)
      let received = Shared<[URLError.Code?]>([])
      let failures = capturingFailures {
        mock.dataTask(with: url) { _, _, error in received.append((error as? URLError)?.code) }
          .resume()
      }
      XCTAssertEqual(failures.count, 1)
      let failure = try XCTUnwrap(failures.first)
      XCTAssertTrue(
        failure.description.contains("No stub matches GET \(url.absoluteString)"),
        failure.description)
      XCTAssertEqual(failure.filePath, "\(#filePath)")
      XCTAssertEqual(failure.line, mockLine)
      XCTAssertEqual(received.current, [.resourceUnavailable])
      XCTAssertEqual(mock.unmatchedRequests.map(\.url), [url])
    }

    func testAFailedVerifyFailsAtTheVerifyLine() throws {
      let mock = URLSessionMock(status: 200)
      mock.dataTask(with: url) { _, _, _ in }.resume()
      var passed = true
      var verifyLine = 0
      let failures = capturingFailures {
        (passed, verifyLine) = (mock.verify(.get("/users/hubot"), called: .once), #line)
      }
      XCTAssertFalse(passed)
      XCTAssertEqual(failures.count, 1)
      let failure = try XCTUnwrap(failures.first)
      XCTAssertEqual(failure.filePath, "\(#filePath)")
      XCTAssertEqual(failure.line, verifyLine)
      XCTAssertTrue(failure.description.contains("/users/hubot"), failure.description)
    }

    func testAForgottenResumeFailsThroughXCTFail() throws {
      let mock = URLSessionMock(status: 200)
      _ = mock.dataTask(with: url) { _, _, _ in }
      var passed = true
      let failures = capturingFailures { passed = mock.verifyAllTasksResumed() }
      XCTAssertFalse(passed)
      XCTAssertEqual(failures.count, 1)
      XCTAssertTrue(failures.first?.description.contains("never resumed") == true)
    }

    func testATimedOutWaitFailsThroughXCTFail() async throws {
      let mock = URLSessionMock(status: 200)
      var thrown: (any Error)?
      let failures = await capturingFailures {
        do {
          try await mock.waitForRequests(count: 1, timeout: .milliseconds(50))
        } catch {
          thrown = error
        }
      }
      XCTAssertTrue(thrown is WaitTimeoutError)
      XCTAssertEqual(failures.count, 1)
      XCTAssertTrue(
        failures.first?.description.contains("Expected 1 request(s), but 0 were sent") == true)
      XCTAssertEqual(failures.first?.filePath, "\(#filePath)")
    }

    func testASpyCompletingATaskItDoesNotHoldFailsThroughXCTFail() {
      let spy = SpySession()
      let task = spy.dataTask(with: url) { _, _, _ in }
      var completed = true
      let failures = capturingFailures { completed = spy.complete(task, with: .status(200)) }
      XCTAssertFalse(completed)
      XCTAssertEqual(failures.map(\.filePath), ["\(#filePath)"])
    }

    func testPassingChecksRecordNothing() {
      let mock = URLSessionMock(status: 200)
      let failures = capturingFailures {
        mock.dataTask(with: url) { _, _, _ in }.resume()
        XCTAssertTrue(mock.verify(.get("/users/octocat"), called: .once))
        XCTAssertTrue(mock.verifyAllTasksResumed())
      }
      XCTAssertTrue(failures.isEmpty)
    }

    // MARK: - The doubles in XCTest style

    func testSeedExampleNeedsNoExpectations() {
      let client = ProfileClient()
      client.session = URLSessionMock(jsonDict: ["login": "dasdom", "id": 1_234_567])!
      let received = Shared<[ProfileClient.User?]>([])
      client.fetchProfile(name: "dasdom") { user, _ in received.append(user) }
      XCTAssertEqual(received.current, [ProfileClient.User(login: "dasdom", id: 1_234_567)])
    }

    func testAsyncClientCallsAndRecordedRequests() async throws {
      let client = ProfileClient()
      let mock = try XCTUnwrap(URLSessionMock(jsonDict: ["login": "octocat", "id": 1]))
      client.session = mock
      let user = try await client.profile(name: "octocat")
      XCTAssertEqual(user, ProfileClient.User(login: "octocat", id: 1))
      XCTAssertEqual(mock.requests.map(\.url?.path), ["/users/octocat"])
    }

    func testTransportErrorsReachTheClient() async {
      let client = ProfileClient()
      client.session = URLSessionMock(error: URLError(.notConnectedToInternet))
      do {
        _ = try await client.profile(name: "octocat")
        XCTFail("expected the transport error")
      } catch {
        XCTAssertEqual((error as? URLError)?.code, .notConnectedToInternet)
      }
    }

    func testVirtualTimeInXCTest() async {
      let clock = VirtualClock()
      let client = ProfileClient()
      client.session = URLSessionMock(
        jsonDict: ["login": "slow", "id": 2], delay: .seconds(30), clock: clock)!
      let received = Shared<[ProfileClient.User?]>([])
      client.fetchProfile(name: "slow") { user, _ in received.append(user) }
      XCTAssertTrue(received.current.isEmpty)
      await clock.advance(by: .seconds(30))
      XCTAssertEqual(received.current, [ProfileClient.User(login: "slow", id: 2)])
    }

    func testSpyManualModeInXCTest() async throws {
      let spy = SpySession()
      let client = ProfileClient()
      client.session = spy
      let call = Task { try await client.profile(name: "octocat") }
      try await spy.waitForRequests(count: 1)
      let task = try XCTUnwrap(spy.pendingTasks.first)
      spy.complete(
        task,
        with: StubResponse(
          data: Data(#"{"login":"octocat","id":1}"#.utf8), response: nil, error: nil))
      let user = try await call.value
      XCTAssertEqual(user.login, "octocat")
    }
  }
#endif

/// Under Swift Testing the same failures are issues, at the test's own line.
///
/// These are the suite's deliberate end-to-end checks of the real routing to `Issue.record`: with
/// the sample client's test of a mistyped request they make the 6 + 1 known issues that the
/// README's "Try it" and `.ci/run` expect. Every other failure-path test reads reports through
/// `withCapturedReports` (see `Support/ReportExpectations.swift`) and records no issue.
@Suite struct FailureReportingTests {
  private let url = URL(string: "https://api.example.com/users/octocat")!

  @Test func anUnmatchedRequestIsAnIssueAtTheLineThatMadeTheMock() {
    let (mock, mockLine) = (URLSessionMock(), #line)
    let received = Shared<[URLError.Code?]>([])
    withKnownIssue {
      mock.dataTask(with: url) { _, _, error in received.append((error as? URLError)?.code) }
        .resume()
    } matching: { issue in
      issueComment(issue).contains("No stub matches GET \(url.absoluteString)")
        && issue.sourceLocation?.line == mockLine
        && issue.sourceLocation?.fileID == #fileID
        && issue.sourceLocation?.filePath == #filePath
    }
    #expect(received.current == [.resourceUnavailable])
  }

  @Test func aFailedVerifyIsAnIssueAtTheVerifyLine() {
    let mock = URLSessionMock(status: 200)
    mock.dataTask(with: url) { _, _, _ in }.resume()
    var passed = true
    let verifyLine = #line + 2
    withKnownIssue {
      passed = mock.verify(.get("/users/hubot"), called: .once)
    } matching: { issue in
      issue.sourceLocation?.line == verifyLine && issue.sourceLocation?.fileID == #fileID
        && issueComment(issue).contains("/users/hubot")
    }
    #expect(!passed)
  }

  @Test func anIssueIsRecordedOncePerFailure() {
    let mock = URLSessionMock()
    let count = Shared<[Int]>([])
    withKnownIssue {
      mock.dataTask(with: url) { _, _, _ in }.resume()
      mock.dataTask(with: url) { _, _, _ in }.resume()
    } matching: { issue in
      count.append(1)
      return issueComment(issue).contains("No stub matches")
    }
    #expect(count.current.count == 2)
  }

  @Test func aFailureOnTheMocksOwnTimerTaskIsAnIssueOfTheTestThatMadeTheMock() async throws {
    // A real-time delay (a millisecond, on the clock given explicitly, so no warning): the answer
    // is delivered by the mock's timer task, not by the test's task. The handler then asks for a
    // URL no stub matches, so the failure is found on that task and must still reach this test.
    let (mock, mockLine) = (URLSessionMock(clock: ContinuousClock()), #line)
    mock.stub(.get("/users/octocat"), with: .status(200).delayed(by: .milliseconds(1)))
    let unmatched = URL(string: "https://api.example.com/users/hubot")!
    let received = Shared<[URLError.Code?]>([])
    try await withKnownIssue {
      mock.dataTask(with: url) { _, _, _ in
        mock.dataTask(with: unmatched) { _, _, error in
          received.append((error as? URLError)?.code)
        }.resume()
      }.resume()
      try await mock.waitForRequests(count: 2)
    } matching: { issue in
      issueComment(issue).contains("No stub matches GET \(unmatched.absoluteString)")
        && issue.sourceLocation?.line == mockLine
    }
    #expect(received.current == [.resourceUnavailable])
  }

  @Test func aDelayWithoutAClockIsAWarningAtTheStubsLine() {
    let mock = URLSessionMock()
    let stubLine = #line + 1
    mock.stub(.get("/users/octocat"), with: .status(200).delayed(by: .seconds(30)))
    let task = mock.dataTask(with: url) { _, _, _ in }
    withKnownIssue {
      task.resume()
    } matching: { issue in
      issue.severity == .warning && issue.sourceLocation?.line == stubLine
        && issueComment(issue).contains("delayed by 30.0 seconds of real time")
    }
    task.cancel()
  }

  @Test func passingChecksRecordNoIssue() {
    let mock = URLSessionMock(status: 200)
    mock.dataTask(with: url) { _, _, _ in }.resume()
    // Any issue recorded here would fail this test.
    #expect(mock.verify(.get("/users/octocat")))
    #expect(mock.verifyAllTasksResumed())
  }
}
