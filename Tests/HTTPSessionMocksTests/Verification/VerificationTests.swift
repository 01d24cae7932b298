import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct VerificationTests {
  /// A mock that answers everything, after these requests.
  private func mockThatSent(_ requests: [(String, String)]) -> URLSessionMock {
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(200))
    for (method, url) in requests { route(mock, method, url) }
    return mock
  }

  // MARK: - CallCount

  @Test func callCountFactoriesAcceptTheirRanges() {
    let cases: [(CallCount, accepted: [Int], rejected: [Int])] = [
      (.never, [0], [1, 2]),
      (.once, [1], [0, 2]),
      (.exactly(3), [3], [2, 4]),
      (.atLeast(2), [2, 3, 1_000], [0, 1]),
      (.atMost(1), [0, 1], [2]),
      (.between(2...3), [2, 3], [1, 4]),
    ]
    for (count, accepted, rejected) in cases {
      for number in accepted { #expect(count.accepts(number), "\(count) accepts \(number)") }
      for number in rejected { #expect(!count.accepts(number), "\(count) rejects \(number)") }
    }
  }

  @Test func callCountDescriptionsReadAsEnglish() {
    #expect(CallCount.never.description == "never")
    #expect(CallCount.once.description == "once")
    #expect(CallCount.exactly(3).description == "exactly 3 times")
    #expect(CallCount.atLeast(1).description == "at least 1 time")
    #expect(CallCount.atLeast(2).description == "at least 2 times")
    #expect(CallCount.atMost(1).description == "at most 1 time")
    #expect(CallCount.between(2...3).description == "between 2 and 3 times")
  }

  @Test func callCountsWithTheSameRangeAreEqual() {
    #expect(CallCount.exactly(1) == .once)
    #expect(CallCount.exactly(0) == .never)
    #expect(CallCount.between(4...4) == .exactly(4))
    #expect(CallCount.atMost(0) == .never)
    #expect(CallCount.exactly(-2) == .never)
    #expect(CallCount.between(-3...2) == .atMost(2))
  }

  @Test func atMostWithANegativeCountMeansNever() {
    #expect(CallCount.atMost(-1) == .never)
    #expect(CallCount.atMost(-1).accepts(0))
  }

  // MARK: - verify

  @Test func verifyReturnsTrueWhenTheCountFits() {
    let mock = mockThatSent([("GET", "https://e.com/users/octocat"), ("GET", "https://e.com/a")])
    #expect(mock.verify(.get("/users/octocat")))
    #expect(mock.verify(.get("/users/{login}"), called: .once))
    #expect(mock.verify(.url("/{any}"), called: .exactly(1)))
    #expect(mock.verify(.any, called: .exactly(2)))
    #expect(mock.verify(.post("/users/octocat"), called: .never))
    #expect(mock.verify(.any, called: .between(1...2)))
  }

  @Test func failedVerifyReturnsFalseAndFailsAtTheCallersLine() {
    let mock = mockThatSent([("GET", "https://e.com/a")])
    let line = #line + 2
    expectReport {
      #expect(!mock.verify(.get("/a"), called: .exactly(2)))
    } matching: { report in
      report.line == line
        && report.fileID == "HTTPSessionMocksTests/VerificationTests.swift"
    }
  }

  @Test func failedVerifyListsEveryRequestClosestFirstWithWhatDiffered() {
    let mock = mockThatSent([
      ("GET", "https://e.com/orders/1"),
      ("POST", "https://e.com/users/octocat"),
      ("GET", "https://e.com/users/octocat/"),
    ])
    let messages = reportMessages { mock.verify(.get("/users/octocat")) }
    #expect(
      messages == [
        """
        Expected GET /users/octocat to be called once, but it was called 0 times.
        Sent requests, closest first:
          2. POST https://e.com/users/octocat
               - method: expected GET, got POST
          3. GET https://e.com/users/octocat/
               - path: expected /users/octocat, got /users/octocat/ (trailing slash)
          1. GET https://e.com/orders/1
               - path: expected /users/octocat, got /orders/1 (segment 1: expected "users", got "orders")

        """
      ])
  }

  @Test func failedVerifyListsMatchingRequestsFirst() throws {
    let mock = mockThatSent([
      ("GET", "https://e.com/users/octocat"),
      ("GET", "https://e.com/users/ada"),
      ("GET", "https://e.com/users/octocat"),
    ])
    let message = try #require(reportMessages { mock.verify(.get("/users/octocat")) }.first)
    #expect(
      message.hasPrefix(
        "Expected GET /users/octocat to be called once, but it was called 2 times.\n"))
    #expect(
      message.contains(
        """
        Matching requests:
          1. GET https://e.com/users/octocat
          3. GET https://e.com/users/octocat
        Other requests, closest first:
          2. GET https://e.com/users/ada
               - path: expected /users/octocat, got /users/ada (segment 2: expected "octocat", got "ada")
        """))
  }

  @Test func failedNeverVerifyReadsNaturally() throws {
    let mock = mockThatSent([("DELETE", "https://e.com/users/octocat")])
    let message = try #require(
      reportMessages { mock.verify(.delete("/users/{login}"), called: .never) }.first)
    #expect(
      message.hasPrefix(
        "Expected DELETE /users/{login} never to be called, but it was called 1 time.\n"))
  }

  @Test func failedVerifyShowsHeadersAndBodiesOfTheRequests() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(200))
    route(
      mock, "POST", "https://e.com/items", headers: ["Content-Type": "application/json"],
      body: Data(#"{"count":3}"#.utf8))
    let message = try #require(
      reportMessages { mock.verify(.post("/items").jsonBody(["count": 2])) }.first)
    #expect(
      message.contains(
        """
          1. POST https://e.com/items
               headers: Content-Type: application/json
               body: {"count":3}
               - body $.count: expected 2, got 3
        """))
  }

  @Test func failedVerifyShowsLongTextBodiesAsTextEvenWhenCutInsideACharacter() throws {
    let mock = URLSessionMock(status: 200)
    let body = "a" + String(repeating: "é", count: 150)
    route(mock, "POST", "https://e.com/notes", body: Data(body.utf8))
    let message = try #require(reportMessages { mock.verify(.get("/notes")) }.first)
    #expect(message.contains(#"body: "a"# + String(repeating: "é", count: 59) + #"…" (301 bytes)"#))
    #expect(!message.contains("binary"))
  }

  @Test func failedVerifyWithNoRequestsSaysSo() {
    let mock = URLSessionMock()
    let messages = reportMessages { mock.verify(.get("/a"), called: .atLeast(1)) }
    #expect(
      messages == [
        "Expected GET /a to be called at least 1 time, but it was called 0 times.\n"
          + "No requests were sent.\n"
      ])
  }

  @Test func failedVerifyListsEveryRequest() throws {
    let mock = mockThatSent((0..<12).map { ("GET", "https://e.com/items/\($0)") })
    let message = try #require(reportMessages { mock.verify(.get("/users")) }.first)
    for number in 0..<12 {
      #expect(message.contains("  \(number + 1). GET https://e.com/items/\(number)\n"))
    }
    #expect(!message.contains("more"))
  }

  // MARK: - requests(matching:)

  @Test func requestsMatchingReturnsTheMatchingRequestsInOrderWithBodies() {
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(201))
    route(mock, "POST", "https://e.com/items", body: Data("first".utf8))
    route(mock, "GET", "https://e.com/items")
    route(mock, "POST", "https://e.com/items", body: Data("second".utf8))
    let posts = mock.requests(matching: .post("/items"))
    #expect(posts.map(\.httpBody) == [Data("first".utf8), Data("second".utf8)])
    #expect(mock.requests(matching: .url("/items")).count == 3)
    #expect(mock.requests(matching: .delete("/items")).isEmpty)
  }

  // MARK: - verifyAllStubsUsed

  @Test func verifyAllStubsUsedPassesWhenEveryStubAnswered() {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .status(200))
    mock.stub(.get("/b"), with: .status(200))
    route(mock, "GET", "https://e.com/a")
    route(mock, "GET", "https://e.com/b")
    #expect(mock.verifyAllStubsUsed())
  }

  @Test func verifyAllStubsUsedNamesEachUnusedStubWithItsSite() {
    let mock = URLSessionMock()
    mock.stub(.get("/used"), with: .status(200))
    let first = #line + 1
    mock.stub(.get("/never"), with: .status(200))
    let second = #line + 1
    mock.stub(.post("/also-never").header("Authorization"), with: .status(201))
    route(mock, "GET", "https://e.com/used")
    let messages = reportMessages { #expect(!mock.verifyAllStubsUsed()) }
    let file = "HTTPSessionMocksTests/VerificationTests.swift"
    #expect(
      messages == [
        """
        2 stub(s) never answered a request:
          - GET /never (registered at \(file):\(first))
          - POST /also-never header Authorization (registered at \(file):\(second))
        Sent requests:
          1. GET https://e.com/used

        """
      ])
  }

  @Test func verifyAllStubsUsedFailsAtTheCallersLine() {
    let mock = URLSessionMock()
    mock.stub(.get("/never"), with: .status(200))
    let line = #line + 2
    expectReport {
      mock.verifyAllStubsUsed()
    } matching: { report in
      report.line == line
    }
  }

  // MARK: - verifyInOrder

  @Test func verifyInOrderPassesWithOtherRequestsBetween() {
    let mock = mockThatSent([
      ("POST", "https://e.com/login"),
      ("GET", "https://e.com/config"),
      ("GET", "https://e.com/me"),
      ("POST", "https://e.com/login"),
    ])
    #expect(mock.verifyInOrder([.post("/login"), .get("/me")]))
    #expect(mock.verifyInOrder([.get("/me"), .post("/login")]))
    #expect(mock.verifyInOrder([.post("/login"), .post("/login")]))
    #expect(mock.verifyInOrder([]))
  }

  @Test func verifyInOrderExplainsARequestThatCameTooEarly() {
    let mock = mockThatSent([("GET", "https://e.com/first"), ("GET", "https://e.com/second")])
    let line = #line + 2
    expectReport {
      #expect(!mock.verifyInOrder([.get("/second"), .get("/first")]))
    } matching: { report in
      report.message == """
        Expected requests in this order:
          1. GET /second
          2. GET /first
        Step 1 matched request 2, but no later request matched step 2, GET /first \
        (it matches request 1, which came too early).
        Sent requests:
          1. GET https://e.com/first
          2. GET https://e.com/second

        """
        && report.line == line
    }
  }

  @Test func verifyInOrderExplainsARequestThatWasNeverSent() {
    let mock = mockThatSent([("GET", "https://e.com/first")])
    let messages = reportMessages { mock.verifyInOrder([.post("/login"), .get("/first")]) }
    #expect(messages.count == 1)
    #expect(
      messages.first?.contains("but no request matched POST /login.\nSent requests:\n") == true)
  }

  @Test func verifyInOrderNeedsAsManyRequestsAsSteps() {
    let mock = mockThatSent([("POST", "https://e.com/login")])
    let messages = reportMessages {
      mock.verifyInOrder([.post("/login"), .post("/login")])
    }
    #expect(
      messages.first?.contains(
        "Step 1 matched request 1, but no later request matched step 2, POST /login.") == true)
  }

  // MARK: - SpySession

  @Test func spyVerifiesWhatItForwarded() {
    let backend = URLSessionMock(status: 200)
    let spy = SpySession(wrapping: backend)
    route(spy, "POST", "https://e.com/login", body: Data("u=a".utf8))
    route(spy, "GET", "https://e.com/me")
    #expect(spy.verify(.post("/login").body(Data("u=a".utf8))))
    #expect(spy.verify(.get("/me"), called: .once))
    #expect(spy.verifyInOrder([.post("/login"), .get("/me")]))
    #expect(spy.requests(matching: .url("/{any}")).count == 2)
    #expect(spy.unmatchedRequests.isEmpty)
    #expect(spy.verifyNoUnmatchedRequests())
  }

  @Test func manualSpyVerifiesRequestsBeforeTheyAreAnswered() {
    let spy = SpySession()
    let task = spy.dataTask(with: routingRequest("GET", "https://e.com/pending")) { _, _, _ in }
    task.resume()
    #expect(spy.verify(.get("/pending")))
    #expect(spy.requests(matching: .get("/pending")).count == 1)
    spy.complete(task, with: .status(200))
  }

  @Test func spyReportsFailedVerificationsLikeTheMock() {
    let spy = SpySession(wrapping: URLSessionMock(status: 200))
    route(spy, "GET", "https://e.com/users/ada")
    route(spy, "GET", "https://e.com/me")
    let line = #line + 2
    expectReport {
      #expect(!spy.verify(.get("/users/octocat")))
    } matching: { report in
      let text = report.message
      return text.hasPrefix(
        "Expected GET /users/octocat to be called once, but it was called 0 times.\n"
          + "Sent requests, closest first:\n  1. GET https://e.com/users/ada\n")
        && text.contains("  2. GET https://e.com/me\n")
        && report.line == line
    }
    expectReport {
      #expect(!spy.verifyInOrder([.get("/me"), .get("/users/ada")]))
    } matching: { report in
      report.message.contains("(it matches request 1, which came too early)")
    }
  }
}
