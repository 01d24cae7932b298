import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct SpySessionTests {
  private let url = URL(string: "https://api.example.com/search?q=a")!

  private func search(_ query: String) -> URL {
    URL(string: "https://api.example.com/search?q=\(query)")!
  }

  // MARK: - Forwarding to a mock

  @Test func forwardsToAMockAndDeliversItsAnswerUnchanged() throws {
    let given = HTTPURLResponse(
      url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: ["X-Trace": "abc"])!
    let mock = URLSessionMock(data: Data("not here".utf8), response: given, error: nil)
    let spy = SpySession(wrapping: mock)
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    #expect(seen.count == 0)
    task.resume()
    #expect(seen.count == 1, "a synchronous mock stays synchronous behind a spy")
    #expect(seen.first?.response === given)
    #expect(seen.first?.data == Data("not here".utf8))
    #expect(task.state == .completed)
  }

  @Test func forwardsTransportErrorsUnchanged() throws {
    let mock = URLSessionMock(error: URLError(.notConnectedToInternet))
    let spy = SpySession(wrapping: mock)
    let seen = Deliveries()
    spy.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.first?.urlError?.code == .notConnectedToInternet)
    #expect(seen.first?.response == nil)
  }

  @Test func recordsWhatItForwardsAndTheWrappedMockSeesTheSame() throws {
    let mock = URLSessionMock(status: 204)
    let spy = SpySession(wrapping: mock)
    var post = URLRequest(url: URL(string: "https://api.example.com/items")!)
    post.httpMethod = "POST"
    post.httpBody = Data("item".utf8)
    spy.dataTask(with: post) { _, _, _ in }.resume()
    spy.dataTask(with: url) { _, _, _ in }.resume()
    _ = spy.dataTask(with: search("never")) { _, _, _ in }
    #expect(spy.requests.map(\.url) == [post.url, url])
    #expect(spy.requests.first?.httpBody == Data("item".utf8))
    #expect(mock.requests.map(\.url) == spy.requests.map(\.url))
    #expect(mock.requests.first?.httpBody == Data("item".utf8))
    #expect(
      spy.events.map(\.kind) == [
        .created(.data), .resumed, .completed(statusCode: 204, error: nil),
        .created(.data), .resumed, .completed(statusCode: 204, error: nil),
        .created(.data),
      ])
  }

  @Test func forwardsUploadsWithTheirBody() throws {
    let mock = URLSessionMock(status: 201)
    let spy = SpySession(wrapping: mock)
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    let seen = Deliveries()
    spy.uploadTask(with: request, from: Data("body".utf8), completionHandler: seen.handler)
      .resume()
    #expect(seen.first?.statusCode == 201)
    #expect(spy.requests.first?.httpBody == Data("body".utf8))
    #expect(mock.requests.first?.httpBody == Data("body".utf8))
    #expect(mock.events.first?.kind == .created(.upload))
  }

  @Test func forwardsDownloadsAndDeletesTheFileAfterTheHandler() throws {
    let mock = URLSessionMock(data: Data("file".utf8), response: nil, error: nil)
    let spy = SpySession(wrapping: mock)
    let seen = Deliveries()
    spy.downloadTask(with: URLRequest(url: url), completionHandler: seen.fileHandler).resume()
    let delivery = try #require(seen.first)
    let file = try #require(delivery.file)
    #expect(delivery.fileContents == Data("file".utf8))
    #expect(!FileManager.default.fileExists(atPath: file.path))
  }

  @Test func asyncDownloadThroughASpyKeepsTheFile() async throws {
    let mock = URLSessionMock(data: Data("kept".utf8), response: nil, error: nil)
    let spy = SpySession(wrapping: mock)
    let (file, _) = try await spy.download(for: URLRequest(url: url))
    defer { try? FileManager.default.removeItem(at: file) }
    #expect(try Data(contentsOf: file) == Data("kept".utf8))
  }

  @Test func cancellingAForwardedTaskCancelsTheWrappedOne() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data("late".utf8), response: nil, error: nil, delay: .seconds(5), clock: clock)
    let spy = SpySession(wrapping: mock)
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    #expect(clock.pendingCount == 1)
    task.cancel()
    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .cancelled)
    #expect(seen.first?.urlError?.failingURL == url)
    #expect(clock.pendingCount == 0)
    #expect(mock.events.contains { $0.kind == .cancelled })
    await clock.run()
    #expect(seen.count == 1)
  }

  @Test func cancellingAForwardedTaskBeforeResumeNeverReachesTheWrappedSession() {
    let mock = URLSessionMock(status: 200)
    let spy = SpySession(wrapping: mock)
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.cancel()
    task.resume()
    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .cancelled)
    #expect(spy.requests.isEmpty)
    #expect(mock.requests.isEmpty)
  }

  @Test func asyncCallsThroughAForwardingSpy() async throws {
    let mock = try #require(URLSessionMock(jsonDict: ["id": 7]))
    let spy = SpySession(wrapping: mock)
    let session: any HTTPSession = spy
    let (data, response) = try await session.data(from: url)
    #expect(String(decoding: data, as: UTF8.self) == #"{"id":7}"#)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    _ = try await session.upload(for: URLRequest(url: url), from: Data("u".utf8))
    #expect(spy.requests.count == 2)
    #expect(spy.requests.last?.httpBody == Data("u".utf8))
  }

  @Test func spiesCanWrapSpies() throws {
    let mock = URLSessionMock(status: 200)
    let inner = SpySession(wrapping: mock)
    let outer = SpySession(wrapping: inner)
    let seen = Deliveries()
    outer.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.first?.statusCode == 200)
    #expect(outer.requests.count == 1)
    #expect(inner.requests.count == 1)
    #expect(mock.requests.count == 1)
  }

  @Test func aLoopThroughASessionOfTheTestsOwnStopsAfterSixteenForwards() {
    let passing = PassingSession()
    let spy = SpySession(wrapping: passing)
    passing.target.withLock { $0 = spy }
    defer { passing.target.withLock { $0 = nil } }  // the loop holds both sessions
    #expect(sendThroughLoop(spy) == .resourceUnavailable)
    // The session's own code makes each next task, so the count travels in a task-local
    // value: sixteen forwards, and the seventeenth request fails.
    #expect(spy.requests.count == 17)
  }

  @Test func aWrappedSessionThatAnswersTwiceIsReportedAndDeliversOnce() {
    let seen = Deliveries()
    var statuses: [Int?] = []
    expectReport {
      let spy = SpySession(wrapping: AnsweringTwiceSession())
      spy.dataTask(with: url, completionHandler: seen.handler).resume()
      statuses = spy.exchanges.map { ($0.response as? HTTPURLResponse)?.statusCode }
    } matching: { report in
      report.message.contains("answered a second time")
    }
    #expect(seen.all.map(\.statusCode) == [200])
    #expect(statuses == [200])
  }

  @Test func anAwaitingCallThroughASessionThatAnswersTwiceGetsTheFirstAnswer() async throws {
    let url = url
    let reports = try await capturedReports {
      let spy = SpySession(wrapping: AnsweringTwiceSession())
      let (data, response) = try await spy.data(from: url)
      #expect((response as? HTTPURLResponse)?.statusCode == 200)
      #expect(data == Data("200".utf8))
      #expect(spy.exchanges.count == 1)
    }
    #expect(reports.map { $0.message.contains("answered a second time") } == [true])
  }

  // MARK: - Wrapping a real URLSession

  @Test func wrapsARealURLSessionAndPassesItsErrorThrough() async throws {
    let real = ClosedPortSession()
    let spy = SpySession(wrapping: real.session)
    let seen = Deliveries()
    spy.dataTask(with: ClosedPortSession.url, completionHandler: seen.handler).resume()
    try await spy.waitForRequests(count: 1)
    #expect(spy.requests.first?.url == ClosedPortSession.url)
    let delivery = await seen.firstDelivery()
    #expect(delivery.urlError?.code == .cannotConnectToHost)
    #expect(delivery.urlError?.failingURL == ClosedPortSession.url)
    #expect(delivery.response == nil)
  }

  @Test func asyncCallsThroughASpyOnARealURLSession() async throws {
    let real = ClosedPortSession()
    let spy = SpySession(wrapping: real.session)
    let error = await #expect(throws: URLError.self) {
      _ = try await spy.data(from: ClosedPortSession.url)
    }
    #expect(error?.code == .cannotConnectToHost)
    #expect(spy.requests.map(\.url) == [ClosedPortSession.url])
  }

  // MARK: - Manual mode

  @Test func manualModeHoldsResumedTasksInResumeOrder() {
    let spy = SpySession()
    let seen = Deliveries()
    let a = spy.dataTask(with: search("a"), completionHandler: seen.handler)
    let b = spy.dataTask(with: search("b"), completionHandler: seen.handler)
    let never = spy.dataTask(with: search("never"), completionHandler: seen.handler)
    b.resume()
    a.resume()
    #expect(spy.pendingTasks.map(\.taskIdentifier) == [b.taskIdentifier, a.taskIdentifier])
    #expect(seen.count == 0)
    #expect(a.state == .running)
    #expect(never.state == .suspended)
    #expect(spy.requests.map(\.url) == [search("b"), search("a")])
  }

  @Test func manualModeCompletesInAnyOrderTheTestChooses() throws {
    let spy = SpySession()
    let seen = Deliveries()
    for query in ["a", "ab", "abc"] {
      spy.dataTask(with: search(query), completionHandler: seen.handler).resume()
    }
    let pending = spy.pendingTasks
    #expect(pending.count == 3)
    #expect(
      spy.complete(
        pending[2], with: StubResponse(data: Data("abc".utf8), response: nil, error: nil)))
    #expect(
      spy.pendingTasks.map(\.taskIdentifier) == [pending[0], pending[1]].map(\.taskIdentifier))
    #expect(
      spy.complete(pending[0], with: StubResponse(data: Data("a".utf8), response: nil, error: nil)))
    #expect(
      spy.complete(pending[1], with: StubResponse(data: Data("ab".utf8), response: nil, error: nil))
    )
    #expect(seen.all.compactMap(\.data) == ["abc", "a", "ab"].map { Data($0.utf8) })
    #expect(spy.pendingTasks.isEmpty)
    #expect(pending.allSatisfy { $0.state == .completed })
  }

  @available(*, deprecated, message: "It checks the deprecated complete(_:data:response:error:)")
  @Test func theDeprecatedCompletionWithDataResponseAndErrorStillAnswers() throws {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    #expect(spy.complete(task, data: Data("abc".utf8), response: nil, error: nil))
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 200)
    #expect(response.url == url)
    #expect(seen.first?.data == Data("abc".utf8))
    #expect(spy.exchanges.count == 1)
    expectReport {
      #expect(!spy.complete(task, data: nil, response: nil, error: nil))
    } matching: { report in
      report.message.contains("Cannot complete task") && report.message.contains("completed")
    }
  }

  @Test func completingWithNoResponseSynthesizesStatus200ForTheRequestURL() throws {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    spy.complete(task, with: StubResponse(data: nil, response: nil, error: nil))
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 200)
    #expect(response.url == url)
  }

  @Test func completingWithAnErrorDeliversNoResponse() {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    spy.complete(task, with: StubResponse(data: nil, response: nil, error: URLError(.timedOut)))
    #expect(seen.first?.urlError?.code == .timedOut)
    #expect(seen.first?.response == nil)
  }

  @Test func completingWithAStubResponse() throws {
    struct Hit: Codable, Equatable { var name: String }
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    spy.complete(task, with: .json([Hit(name: "a")], status: 202))
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 202)
    #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
    let data = try #require(seen.first?.data)
    #expect(try JSONDecoder().decode([Hit].self, from: data) == [Hit(name: "a")])
  }

  @Test func aStubResponsesDelayIsIgnoredInManualMode() {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    spy.complete(task, with: StubResponse.status(200).delayed(by: .seconds(30)))
    #expect(seen.count == 1)
  }

  @Test func completingATaskThatWasNeverResumedReportsAFailure() {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    expectReport {
      #expect(!spy.complete(task, with: StubResponse(data: nil, response: nil, error: nil)))
    } matching: { report in
      let text = report.message
      return text.contains("Cannot complete task") && text.contains("suspended")
    }
    #expect(seen.count == 0)
    #expect(task.state == .suspended)
  }

  @Test func completingATaskTwiceReportsAFailureAndDeliversOnce() {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    #expect(spy.complete(task, with: .status(200)))
    expectReport {
      #expect(!spy.complete(task, with: .status(500)))
    } matching: { report in
      let text = report.message
      return text.contains("Cannot complete task") && text.contains("completed")
    }
    #expect(seen.all.map(\.statusCode) == [200])
  }

  @Test func completingATaskOfAForwardingSpyReportsAFailure() {
    let mock = URLSessionMock(status: 200)
    let spy = SpySession(wrapping: mock)
    let task = spy.dataTask(with: url) { _, _, _ in }
    task.resume()
    expectReport {
      #expect(!spy.complete(task, with: .status(500)))
    } matching: { report in
      report.message.contains("only a spy made with SpySession() holds tasks")
    }
  }

  @Test func completingAnotherSpysTaskReportsAFailure() {
    let spy = SpySession()
    let other = SpySession()
    let task = other.dataTask(with: url) { _, _, _ in }
    task.resume()
    expectReport {
      #expect(!spy.complete(task, with: .status(200)))
    } matching: { report in
      let text = report.message
      return text.contains("Cannot complete task") && text.contains("made by another session")
        && !text.contains("it is running")
    }
    #expect(other.pendingTasks.count == 1)
  }

  @Test func cancelInManualModeDeliversCancelledAndLeavesThePendingList() throws {
    let spy = SpySession()
    let seen = Deliveries()
    let kept = spy.dataTask(with: search("kept"), completionHandler: seen.handler)
    let dropped = spy.dataTask(with: search("dropped"), completionHandler: seen.handler)
    kept.resume()
    dropped.resume()
    dropped.cancel()
    #expect(seen.count == 1)
    let error = try #require(seen.first?.urlError)
    #expect(error.code == .cancelled)
    #expect(error.failingURL == search("dropped"))
    #expect(spy.pendingTasks.map(\.taskIdentifier) == [kept.taskIdentifier])
    #expect(dropped.state == .completed)
    expectReport {
      #expect(!spy.complete(dropped, with: .status(200)))
    } matching: { report in
      report.message.contains("Cannot complete task")
    }
    #expect(seen.count == 1)
  }

  @Test func cancelBeforeResumeInManualModeNeverBecomesPending() {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.dataTask(with: url, completionHandler: seen.handler)
    task.cancel()
    task.resume()
    #expect(spy.pendingTasks.isEmpty)
    #expect(seen.first?.urlError?.code == .cancelled)
    #expect(spy.requests.isEmpty)
  }

  @Test func manualModeDownloadsGetAFileWithTheCompletedBody() throws {
    let spy = SpySession()
    let seen = Deliveries()
    let task = spy.downloadTask(with: URLRequest(url: url), completionHandler: seen.fileHandler)
    task.resume()
    spy.complete(task, with: StubResponse(data: Data("report".utf8), response: nil, error: nil))
    let file = try #require(seen.first?.file)
    #expect(seen.first?.fileContents == Data("report".utf8))
    #expect(!FileManager.default.fileExists(atPath: file.path))
  }

  @Test func asyncCallsThroughAManualSpyWaitForTheTest() async throws {
    let spy = SpySession()
    let first = Task { try await spy.data(from: search("a")) }
    let second = Task { try await spy.data(from: search("ab")) }
    try await spy.waitForRequests(count: 2)
    let pending = spy.pendingTasks
    #expect(pending.count == 2)
    // Answer each with its own query, the later search first.
    for task in pending.reversed() {
      let query = task.originalRequest.url?.query ?? ""
      spy.complete(task, with: .text(query))
    }
    #expect(String(decoding: try await first.value.0, as: UTF8.self) == "q=a")
    #expect(String(decoding: try await second.value.0, as: UTF8.self) == "q=ab")
    #expect(spy.events.filter { $0.kind == .completed(statusCode: 200, error: nil) }.count == 2)
  }

  @Test func cancellingAnAwaitingCallInManualModeThrowsCancelled() async throws {
    let spy = SpySession()
    let call = Task { try await spy.data(from: url) }
    try await spy.waitForRequests(count: 1)
    #expect(spy.pendingTasks.count == 1)
    call.cancel()
    let result = await call.result
    let error = #expect(throws: URLError.self) { try result.get() }
    #expect(error?.code == .cancelled)
    #expect(spy.pendingTasks.isEmpty)
  }

  @Test func manualUploadRecordsTheBody() async throws {
    let spy = SpySession()
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    let call = Task { try await spy.upload(for: request, from: Data("payload".utf8)) }
    try await spy.waitForRequests(count: 1)
    #expect(spy.pendingTasks.first?.originalRequest.httpBody == Data("payload".utf8))
    spy.complete(try #require(spy.pendingTasks.first), with: .status(201))
    #expect((try await call.value.1 as? HTTPURLResponse)?.statusCode == 201)
  }

  @Test func pendingTasksCanBePickedByWhatTheyAskFor() throws {
    let spy = SpySession()
    let seen = Deliveries()
    spy.dataTask(with: search("a"), completionHandler: seen.handler).resume()
    spy.dataTask(with: search("ab"), completionHandler: seen.handler).resume()
    let later = try #require(spy.pendingTasks(matching: .get("/search?q=ab")).first)
    #expect(spy.pendingTasks(matching: .get("/search?q=ab")).count == 1)
    #expect(spy.pendingTasks(matching: .post("/search")).isEmpty)
    spy.complete(later, with: .status(204))
    #expect(spy.pendingTasks.map(\.originalRequest.url) == [search("a")])
    #expect((seen.first?.response as? HTTPURLResponse)?.statusCode == 204)
  }
}
