import Foundation
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct MockVerificationTests {
  @Test func scopePassesWhenEveryStubAnswered() async throws {
    try await withMockVerification {
      let mock = URLSessionMock()
      mock.stub(.get("/a"), with: .status(204))
      let (_, response) = try await mock.data(from: URL(string: "https://example.com/a")!)
      #expect((response as? HTTPURLResponse)?.statusCode == 204)
    }
  }

  @Test func scopeReportsAnUnusedStubWithWhereItWasRegistered() async {
    await expectReport {
      await withMockVerification {
        let mock = URLSessionMock()
        mock.stub(.get("/used"), with: .status(200))
        mock.stub(.get("/never-called"), with: .status(200))
        _ = try? await mock.data(from: URL(string: "https://example.com/used")!)
      }
    } matching: { report in
      let message = report.description
      return message.contains("/never-called") && message.contains("MockVerificationTests.swift")
        && !message.contains("- GET /used ")
    }
  }

  @Test func scopeReportsRequestsAnsweredByAPolicy() {
    expectReport {
      withMockVerification {
        let mock = URLSessionMock()
        mock.unmatchedRequestPolicy = .respond(with: .status(404))
        mock.dataTask(with: URL(string: "https://example.com/missing")!) { _, _, _ in }.resume()
      }
    } matching: { report in
      report.description.contains("GET https://example.com/missing")
    }
  }

  @Test func scopeDoesNotReportAnUnmatchedRequestTwice() {
    let reports = expectReport(containing: "No stub matches GET https://example.com/x") {
      withMockVerification {
        let mock = URLSessionMock()
        mock.dataTask(with: URL(string: "https://example.com/x")!) { _, _, _ in }.resume()
      }
    }
    #expect(reports.count == 1)
  }

  @Test func scopeIgnoresMocksCreatedOutsideIt() {
    let outside = URLSessionMock()
    outside.stub(.get("/unused"), with: .status(200))
    withMockVerification {}
  }

  @Test func scopeReportsAForgottenResume() {
    expectReport {
      withMockVerification {
        let mock = URLSessionMock(status: 200)
        _ = mock.dataTask(with: URL(string: "https://example.com/never-sent")!) { _, _, _ in }
      }
    } matching: { report in
      let message = report.description
      return message.contains("never resumed")
        && message.contains("GET https://example.com/never-sent")
    }
  }

  @Test func scopeReportsTasksASpyStillHolds() {
    expectReport {
      withMockVerification {
        let spy = SpySession()
        spy.dataTask(with: URL(string: "https://example.com/held")!) { _, _, _ in }.resume()
      }
    } matching: { report in
      let message = report.description
      return message.contains("The SpySession created at")
        && message.contains("still held, never completed")
        && message.contains("GET https://example.com/held")
    }
  }

  @Test func scopePassesASpyWhoseTasksWereCompleted() {
    withMockVerification {
      let spy = SpySession()
      spy.dataTask(with: URL(string: "https://example.com/a")!) { _, _, _ in }.resume()
      for task in spy.pendingTasks { spy.complete(task, with: .status(200)) }
    }
  }

  @Test func traitVerifiesTheMocksOfItsTest() async throws {
    let test = try #require(Test.current)
    try await expectReport {
      try await MockVerificationTrait().provideScope(for: test, testCase: Test.Case.current) {
        let mock = URLSessionMock()
        mock.stub(.delete("/repos/{id}"), with: .status(204))
      }
    } matching: { report in
      report.description.contains("DELETE /repos/{id}")
    }
  }

  @Test(.verifyingMocks) func traitPassesACleanTest() async throws {
    let mock = URLSessionMock()
    mock.stub(.post("/items"), with: .status(201))
    var request = URLRequest(url: URL(string: "https://example.com/items")!)
    request.httpMethod = "POST"
    let (_, response) = try await mock.data(for: request)
    #expect((response as? HTTPURLResponse)?.statusCode == 201)
  }
}
