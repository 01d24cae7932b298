import Dispatch
import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct URLSessionMockTests {
  private struct User: Codable, Equatable, Sendable {
    var login: String
    var id: Int
  }

  /// An object whose lifetime shows whether a handler that captured it is still held.
  private final class Witness: Sendable {}

  private let url = URL(string: "https://api.example.com/users/octocat?page=2")!

  // MARK: - DHURLSessionStub's form

  @Test func dhStubFormAnswersEveryRequestWithTheGivenData() throws {
    let mock = URLSessionMock(data: Data("hello".utf8), response: nil, error: nil)
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    mock.dataTask(
      with: URL(string: "https://other.example.org/x")!, completionHandler: seen.handler
    )
    .resume()
    #expect(seen.all.map(\.data) == [Data("hello".utf8), Data("hello".utf8)])
    #expect(seen.all.allSatisfy { $0.error == nil })
  }

  @Test func dhStubFormSynthesizesStatus200ForTheRequestsOwnURL() throws {
    let mock = URLSessionMock(data: Data(), response: nil, error: nil)
    let seen = Deliveries()
    var request = URLRequest(url: url)
    request.httpMethod = "DELETE"
    mock.dataTask(with: request, completionHandler: seen.handler).resume()
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 200)
    #expect(response.url == url)
  }

  @Test func dhStubFormDeliversAGivenResponseAsGiven() throws {
    let given = HTTPURLResponse(
      url: URL(string: "https://elsewhere.example.com/")!, statusCode: 418, httpVersion: "HTTP/1.1",
      headerFields: ["X-Trace": "abc"])!
    let mock = URLSessionMock(data: Data("{}".utf8), response: given, error: nil)
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    let response = try #require(seen.first?.response)
    #expect(response === given)
    #expect(seen.first?.data == Data("{}".utf8))
  }

  @Test func anErrorComesWithNoResponseUnlessOneIsGiven() throws {
    let plain = URLSessionMock(data: nil, response: nil, error: URLError(.timedOut))
    let seen = Deliveries()
    plain.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.first?.urlError?.code == .timedOut)
    #expect(seen.first?.response == nil)
    #expect(seen.first?.data == nil)

    let given = HTTPURLResponse(url: url, statusCode: 500, httpVersion: nil, headerFields: nil)!
    let withResponse = URLSessionMock(data: nil, response: given, error: URLError(.timedOut))
    withResponse.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.all.last?.urlError?.code == .timedOut)
    #expect(seen.all.last?.response === given)
  }

  // MARK: - jsonDict

  @Test func jsonDictAnswersWithTheDictionaryAsJSON() throws {
    let mock = try #require(URLSessionMock(jsonDict: ["login": "dasdom", "id": 1_234_567]))
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    let data = try #require(seen.first?.data)
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(object["login"] as? String == "dasdom")
    #expect(object["id"] as? Int == 1_234_567)
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 200)
    #expect(response.url == url)
    #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
  }

  @Test func jsonDictKeepsAGivenResponseAndError() throws {
    let given = HTTPURLResponse(url: url, statusCode: 404, httpVersion: nil, headerFields: nil)!
    let withResponse = try #require(URLSessionMock(jsonDict: ["a": 1], response: given))
    let seen = Deliveries()
    withResponse.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.first?.response === given)

    let withError = try #require(
      URLSessionMock(jsonDict: ["a": 1], error: URLError(.notConnectedToInternet)))
    withError.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.all.last?.urlError?.code == .notConnectedToInternet)
    #expect(seen.all.last?.response == nil)
  }

  @Test func jsonDictReturnsNilForAnObjectJSONCannotEncode() {
    #expect(URLSessionMock(jsonDict: ["when": Date()]) == nil)
    #expect(URLSessionMock(jsonDict: ["ratio": Double.nan]) == nil)
    #expect(URLSessionMock(jsonDict: ["infinite": Double.infinity]) == nil)
    #expect(URLSessionMock(jsonDict: ["nested": ["deeper": [Date()]]]) == nil)
    #expect(URLSessionMock(jsonDict: ["fine": ["deeper": [1, 2]]]) != nil)
  }

  // MARK: - Typed forms

  @Test func jsonFormEncodesTheValueWithAJSONContentType() throws {
    let mock = URLSessionMock(json: User(login: "octocat", id: 1))
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    let data = try #require(seen.first?.data)
    #expect(try JSONDecoder().decode(User.self, from: data) == User(login: "octocat", id: 1))
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 200)
    #expect(response.url == url)
    #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
  }

  @Test func jsonFormTakesAStatusAndHeaders() throws {
    let mock = URLSessionMock(json: ["created": true], status: 201, headers: ["Location": "/x/1"])
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 201)
    #expect(response.value(forHTTPHeaderField: "Location") == "/x/1")
    #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
  }

  @Test func statusFormAnswersWithThatStatusAndAnEmptyBody() throws {
    let mock = URLSessionMock(status: 404)
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    let response = try #require(seen.first?.response as? HTTPURLResponse)
    #expect(response.statusCode == 404)
    #expect(response.url == url)
    #expect(seen.first?.data == Data())
    #expect(seen.first?.error == nil)
  }

  @Test func errorFormFailsEveryRequestWithNoResponse() throws {
    let mock = URLSessionMock(error: URLError(.networkConnectionLost))
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.first?.urlError?.code == .networkConnectionLost)
    #expect(seen.first?.response == nil)
    #expect(seen.first?.data == nil)
  }

  // MARK: - Delivery

  @Test func nothingHappensBeforeResume() {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    #expect(seen.count == 0)
    #expect(task.state == .suspended)
    #expect(mock.requests.isEmpty)
  }

  @Test func theHandlerRunsSynchronouslyInsideResumeWithNoDelay() {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let ranInside = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: ranInside.handler)
    task.resume()
    // No waiting of any kind: resume() has returned, so the handler has run.
    #expect(ranInside.count == 1)
    #expect(task.state == .completed)
  }

  @Test func aSecondResumeDoesNothing() {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    task.resume()
    #expect(seen.count == 1)
    #expect(mock.requests.count == 1)
  }

  @Test func aSecondResumeOfADelayedTaskDoesNotSendOrDeliverTwice() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data("x".utf8), response: nil, error: nil, delay: .seconds(1), clock: clock)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    task.resume()
    #expect(clock.pendingCount == 1)
    await clock.run()
    #expect(seen.count == 1)
    #expect(mock.requests.count == 1)
  }

  @Test func cancelBeforeResumeDeliversCancelledWithTheFailingURLOnce() throws {
    let mock = URLSessionMock(data: Data("never".utf8), response: nil, error: nil)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    task.cancel()
    task.resume()
    task.cancel()
    #expect(seen.count == 1)
    let error = try #require(seen.first?.urlError)
    #expect(error.code == .cancelled)
    #expect(error.failingURL == url)
    #expect((error as NSError).userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
    #expect(seen.first?.data == nil)
    #expect(seen.first?.response == nil)
    #expect(mock.requests.isEmpty)
  }

  @Test func cancelDuringADelayedDeliveryWinsOverThePendingAnswer() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data("late".utf8), response: nil, error: nil, delay: .seconds(10), clock: clock)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    #expect(task.state == .running)
    #expect(seen.count == 0)
    task.cancel()
    #expect(seen.count == 1)
    #expect(seen.first?.urlError?.code == .cancelled)
    #expect(seen.first?.urlError?.failingURL == url)
    #expect(clock.pendingCount == 0)
    await clock.advance(by: .seconds(60))
    #expect(seen.count == 1)
    #expect(seen.first?.data == nil)
  }

  @Test func cancelAfterCompletionDoesNothing() {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    task.cancel()
    #expect(seen.count == 1)
    #expect(seen.first?.error == nil)
    #expect(task.state == .completed)
    #expect(!mock.events.contains { $0.kind == .cancelled })
  }

  @Test func cancelFromInsideTheHandlerDoesNothing() {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let seen = Deliveries()
    let holder = Shared<MockTask?>(nil)
    let task = mock.dataTask(with: url) { data, response, error in
      holder.current?.cancel()
      seen.handler(data, response, error)
    }
    holder.withLock { $0 = task }
    task.resume()
    #expect(seen.count == 1)
    #expect(seen.first?.error == nil)
    #expect(task.state == .completed)
  }

  @Test func stateGoesSuspendedRunningCompleted() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(1), clock: clock)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    seen.stateProbe = { task.state }
    var states = [task.state]
    task.resume()
    states.append(task.state)
    await clock.advance(by: .seconds(1))
    states.append(task.state)
    #expect(states == [.suspended, .running, .completed])
    #expect(seen.first?.stateInHandler == .completed)
  }

  @Test func cancelledTaskEndsCompleted() {
    let mock = URLSessionMock(data: Data(), response: nil, error: nil)
    let task = mock.dataTask(with: url) { _, _, _ in }
    task.cancel()
    #expect(task.state == .completed)
    #expect(task.error.map { ($0 as? URLError)?.code } == .cancelled)
  }

  @Test func theHandlerIsReleasedOnceItHasRun() {
    let mock = URLSessionMock(data: Data(), response: nil, error: nil)
    weak var weakWitness: Witness?
    let task: MockTask
    do {
      let witness = Witness()
      weakWitness = witness
      task = mock.dataTask(with: url) { _, _, _ in _ = witness }
    }
    #expect(weakWitness != nil, "the suspended task holds its handler")
    task.resume()
    #expect(weakWitness == nil)
  }

  @Test func theHandlerIsReleasedWhenTheTaskIsCancelled() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(1), clock: clock)
    weak var weakWitness: Witness?
    let task: MockTask
    do {
      let witness = Witness()
      weakWitness = witness
      task = mock.dataTask(with: url) { _, _, _ in _ = witness }
    }
    task.resume()
    #expect(weakWitness != nil, "the running task holds its handler")
    task.cancel()
    #expect(weakWitness == nil)
    await clock.run()
    #expect(weakWitness == nil)
  }

  // MARK: - Delays

  @Test func aDelayedAnswerArrivesWhenTheVirtualClockReachesIt() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data("late".utf8), response: nil, error: nil, delay: .seconds(30), clock: clock)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    task.resume()
    #expect(mock.requests.count == 1, "the request is sent on resume, the answer comes later")
    await clock.advance(by: .seconds(29))
    #expect(seen.count == 0)
    #expect(task.state == .running)
    await clock.advance(by: .seconds(1))
    #expect(seen.count == 1)
    #expect(seen.first?.data == Data("late".utf8))
    #expect(task.state == .completed)
  }

  @Test func eachTaskWaitsItsOwnDelayFromItsOwnResume() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(10), clock: clock)
    let first = Deliveries()
    let second = Deliveries()
    mock.dataTask(with: url, completionHandler: first.handler).resume()
    await clock.advance(by: .seconds(4))
    mock.dataTask(with: url, completionHandler: second.handler).resume()
    await clock.advance(by: .seconds(6))
    #expect(first.count == 1)
    #expect(second.count == 0)
    await clock.advance(by: .seconds(4))
    #expect(second.count == 1)
  }

  @Test func typedFormsTakeADelayToo() async {
    let clock = VirtualClock()
    let json = URLSessionMock(json: ["a": 1], delay: .seconds(2), clock: clock)
    let status = URLSessionMock(status: 204, delay: .seconds(3), clock: clock)
    let failure = URLSessionMock(error: URLError(.timedOut), delay: .seconds(4), clock: clock)
    let dict = URLSessionMock(jsonDict: ["b": 2], delay: .seconds(5), clock: clock)!
    let seen = Deliveries()
    for session in [json, status, failure, dict] {
      session.dataTask(with: url, completionHandler: seen.handler).resume()
    }
    #expect(seen.count == 0)
    await clock.advance(by: .seconds(2))
    #expect(seen.count == 1)
    await clock.advance(by: .seconds(3))
    #expect(seen.all.map(\.statusCode) == [200, 204, nil, 200])
    #expect(seen.all[2].urlError?.code == .timedOut)
  }

  @Test func aZeroDelayAnswersSynchronously() {
    let clock = VirtualClock()
    let mock = URLSessionMock(data: Data(), response: nil, error: nil, delay: .zero, clock: clock)
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()
    #expect(seen.count == 1)
    #expect(clock.pendingCount == 0)
  }

  @Test func withoutAClockDelaysRunOnRealTime() {
    let (mock, mockLine) = (
      URLSessionMock(data: Data(), response: nil, error: nil, delay: .seconds(3_600)), #line
    )
    #expect(mock.clock is ContinuousClock)
    let seen = Deliveries()
    let task = mock.dataTask(with: url, completionHandler: seen.handler)
    // The mock warns (once) that the delay takes real time, pointing at the line that made it.
    let warnings = expectReport(
      containing: "seconds of real time", "has no clock",
      "URLSessionMock(clock: clock)", severity: .warning
    ) {
      task.resume()
    }
    #expect(warnings.map(\.line) == [mockLine])
    #expect(seen.count == 0, "an hour of real time has not passed")
    #expect(task.state == .running)
    task.cancel()
    #expect(seen.first?.urlError?.code == .cancelled)
  }

  // MARK: - Async methods

  @Test func asyncMethodsAnswerThroughTheProtocol() async throws {
    let mock = try #require(URLSessionMock(jsonDict: ["ok": true]))
    let session: any HTTPSession = mock
    let (byRequest, response) = try await session.data(for: URLRequest(url: url))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect(String(decoding: byRequest, as: UTF8.self) == #"{"ok":true}"#)
    let (byURL, _) = try await session.data(from: url)
    #expect(byURL == byRequest)
    let (uploaded, _) = try await session.upload(
      for: URLRequest(url: url), from: Data("body".utf8))
    #expect(uploaded == byRequest)
    #expect(mock.requests.map(\.url) == [url, url, url])
  }

  @Test func asyncMethodsThrowTheTransportError() async {
    let mock = URLSessionMock(error: URLError(.cannotFindHost))
    await #expect(throws: URLError(.cannotFindHost)) {
      _ = try await mock.data(from: url)
    }
    await #expect(throws: URLError(.cannotFindHost)) {
      _ = try await mock.download(for: URLRequest(url: url))
    }
  }

  @Test func cancellingTheAwaitingTaskCancelsTheRequestAndThrowsCancelled() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(5), clock: clock)
    let call = Task { try await mock.data(from: url) }
    try await mock.waitForRequests(count: 1)
    #expect(clock.pendingCount == 1)
    call.cancel()
    let result = await call.result
    let error = #expect(throws: URLError.self) { try result.get() }
    #expect(error?.code == .cancelled)
    #expect(clock.pendingCount == 0, "the pending answer was withdrawn")
    #expect(mock.events.contains { $0.kind == .cancelled })
  }

  @Test(arguments: ["data", "upload", "download"])
  func aTaskCancelledBeforeItStartsNeverSendsARequest(_ method: String) async throws {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let url = url
    let call = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      switch method {
      case "data": _ = try await mock.data(from: url)
      case "upload": _ = try await mock.upload(for: URLRequest(url: url), from: Data("b".utf8))
      default: _ = try await mock.download(for: URLRequest(url: url))
      }
    }
    let result = await call.result
    let error = #expect(throws: URLError.self) { try result.get() }
    #expect(error?.code == .cancelled)
    #expect(mock.requests.isEmpty)
    #expect(!mock.events.contains { $0.kind == .resumed })
  }

  // MARK: - Upload and download

  @Test func uploadTaskRecordsTheBodyAsHTTPBody() throws {
    let mock = URLSessionMock(status: 201)
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.httpBody = Data("ignored".utf8)
    let seen = Deliveries()
    mock.uploadTask(
      with: request, from: Data(#"{"title":"Bug"}"#.utf8), completionHandler: seen.handler
    )
    .resume()
    #expect(seen.first?.statusCode == 201)
    let sent = try #require(mock.requests.first)
    #expect(sent.httpBody == Data(#"{"title":"Bug"}"#.utf8))
    #expect(sent.httpMethod == "POST")
  }

  @Test func asyncUploadRecordsTheBodyToo() async throws {
    let mock = URLSessionMock(status: 201)
    var request = URLRequest(url: url)
    request.httpMethod = "PUT"
    _ = try await mock.upload(for: request, from: Data("payload".utf8))
    #expect(mock.requests.first?.httpBody == Data("payload".utf8))
  }

  @Test func downloadTaskHandsOverATemporaryFileAndDeletesItAfterTheHandler() throws {
    let mock = URLSessionMock(data: Data("file body".utf8), response: nil, error: nil)
    let seen = Deliveries()
    mock.downloadTask(with: URLRequest(url: url), completionHandler: seen.fileHandler).resume()
    let delivery = try #require(seen.first)
    let file = try #require(delivery.file)
    #expect(file.isFileURL)
    #expect(delivery.fileContents == Data("file body".utf8))
    #expect(delivery.statusCode == 200)
    #expect(!FileManager.default.fileExists(atPath: file.path))
  }

  @Test func eachDownloadGetsAFreshFile() throws {
    let mock = URLSessionMock(data: Data("a".utf8), response: nil, error: nil)
    let seen = Deliveries()
    mock.downloadTask(with: URLRequest(url: url), completionHandler: seen.fileHandler).resume()
    mock.downloadTask(with: URLRequest(url: url), completionHandler: seen.fileHandler).resume()
    let files = seen.all.compactMap(\.file)
    #expect(files.count == 2)
    #expect(Set(files).count == 2)
  }

  @Test func downloadWithAnErrorHandsOverNoFile() throws {
    let mock = URLSessionMock(error: URLError(.networkConnectionLost))
    let seen = Deliveries()
    mock.downloadTask(with: URLRequest(url: url), completionHandler: seen.fileHandler).resume()
    #expect(seen.first?.file == nil)
    #expect(seen.first?.urlError?.code == .networkConnectionLost)
  }

  @Test func asyncDownloadKeepsTheFileForTheCaller() async throws {
    let mock = URLSessionMock(data: Data("kept".utf8), response: nil, error: nil)
    let (file, response) = try await mock.download(for: URLRequest(url: url))
    defer { try? FileManager.default.removeItem(at: file) }
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    #expect(FileManager.default.fileExists(atPath: file.path))
    #expect(try Data(contentsOf: file) == Data("kept".utf8))
  }

  // MARK: - Recording

  @Test func requestsAreRecordedInResumeOrderWithTheirBodies() throws {
    let mock = URLSessionMock(data: Data(), response: nil, error: nil)
    func request(_ path: String) -> URLRequest {
      var request = URLRequest(url: URL(string: "https://api.example.com/\(path)")!)
      request.httpMethod = "POST"
      request.httpBody = Data(path.utf8)
      request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
      return request
    }
    let first = mock.dataTask(with: request("first")) { _, _, _ in }
    let second = mock.dataTask(with: request("second")) { _, _, _ in }
    let third = mock.dataTask(with: request("third")) { _, _, _ in }
    _ = mock.dataTask(with: request("never")) { _, _, _ in }
    third.resume()
    first.resume()
    second.resume()
    #expect(mock.requests.map(\.url?.lastPathComponent) == ["third", "first", "second"])
    #expect(mock.requests.map(\.httpBody) == ["third", "first", "second"].map { Data($0.utf8) })
    #expect(
      mock.requests.allSatisfy { $0.value(forHTTPHeaderField: "Authorization") == "Bearer t" })
  }

  @Test func eventsShowTheWholeLifeOfEveryTask() {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(1), clock: clock)
    let forgotten = mock.dataTask(with: url) { _, _, _ in }
    let answered = mock.dataTask(with: url) { _, _, _ in }
    let cancelled = mock.downloadTask(with: URLRequest(url: url)) { _, _, _ in }
    answered.resume()
    cancelled.resume()
    cancelled.cancel()
    let kinds = Dictionary(grouping: mock.events, by: \.taskIdentifier).mapValues { $0.map(\.kind) }
    #expect(kinds[forgotten.taskIdentifier] == [.created(.data)])
    #expect(kinds[answered.taskIdentifier] == [.created(.data), .resumed])
    #expect(
      kinds[cancelled.taskIdentifier] == [
        .created(.download), .resumed, .cancelled,
        .completed(statusCode: nil, error: "URLError(.cancelled)"),
      ])
  }

  @Test func completionEventCarriesTheStatus() {
    let mock = URLSessionMock(status: 503)
    let task = mock.dataTask(with: url) { _, _, _ in }
    task.resume()
    #expect(
      mock.events.map(\.kind) == [
        .created(.data), .resumed, .completed(statusCode: 503, error: nil),
      ])
    #expect(mock.events.allSatisfy { $0.taskIdentifier == task.taskIdentifier })
  }

  @Test func taskIdentifiersAreDistinctPerMock() {
    let mock = URLSessionMock(status: 200)
    let ids = (0..<5).map { _ in mock.dataTask(with: url) { _, _, _ in }.taskIdentifier }
    #expect(Set(ids).count == 5)
  }

  @Test func aTaskThatWasNeverResumedIsDetected() {
    let mock = URLSessionMock(status: 200)
    let resumed = mock.dataTask(with: url) { _, _, _ in }
    resumed.resume()
    let cancelled = mock.dataTask(with: url) { _, _, _ in }
    cancelled.cancel()
    _ = mock.dataTask(with: URL(string: "https://api.example.com/forgotten")!) { _, _, _ in }
    expectReport {
      #expect(!mock.verifyAllTasksResumed())
    } matching: { report in
      let text = report.message
      return text.contains("never resumed") && text.contains("https://api.example.com/forgotten")
        && !text.contains(url.absoluteString)
    }
  }

  @Test func verifyAllTasksResumedPassesWhenEveryTaskWasResumedOrCancelled() {
    let mock = URLSessionMock(status: 200)
    mock.dataTask(with: url) { _, _, _ in }.resume()
    mock.dataTask(with: url) { _, _, _ in }.cancel()
    #expect(mock.verifyAllTasksResumed())
  }

  // MARK: - waitForRequests

  @Test func waitForRequestsReturnsOnceAnotherTaskHasSent() async throws {
    let mock = URLSessionMock(status: 200)
    let url = url
    let senders = (0..<3).map { _ in
      Task { _ = try await mock.data(from: url) }
    }
    try await mock.waitForRequests(count: 3)
    #expect(mock.requests.count >= 3)
    for sender in senders { try await sender.value }
  }

  @Test func waitForRequestsWakesWhenAVirtualClockLetsTheSenderGo() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(status: 200)
    let url = url
    let sender = Task {
      try await clock.sleep(for: .seconds(10))
      mock.dataTask(with: url) { _, _, _ in }.resume()
    }
    try await clock.waitForSleepers(count: 1)
    #expect(mock.requests.isEmpty)
    let waiter = Task { try await mock.waitForRequests(count: 1) }
    await clock.advance(by: .seconds(10))
    try await waiter.value
    #expect(mock.requests.count == 1)
    try await sender.value
  }

  @Test func waitForRequestsReturnsAtOnceWhenEnoughWereSent() async throws {
    let mock = URLSessionMock(status: 200)
    mock.dataTask(with: url) { _, _, _ in }.resume()
    try await mock.waitForRequests(count: 1, timeout: .milliseconds(50))
    try await mock.waitForRequests(count: 0, timeout: .milliseconds(50))
  }

  @Test func waitForExchangesWaitsForAStreamToEndNotForItsRequest() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: .events([ServerSentEvent(data: "a")], every: .seconds(1)))
    let (stream, _) = try await mock.stream(for: URLRequest(url: url))
    await expectReport {
      await #expect(throws: WaitTimeoutError.self) {
        try await mock.waitForExchanges(count: 1, timeout: .milliseconds(50))
      }
    } matching: { report in
      report.message.contains("Expected 1 exchange(s) to end, but 0 of 1 sent request(s)")
        && report.message.contains("Still open") && report.message.contains(url.absoluteString)
    }
    let waiter = Task { try await mock.waitForExchanges(count: 1) }
    await clock.advance(by: .seconds(1))
    try await waiter.value
    #expect(mock.exchanges.first?.pieces.count == 1)
    withExtendedLifetime(stream) {}
  }

  @Test func aCreatedButUnresumedTaskDoesNotSatisfyWaitForRequests() async {
    let mock = URLSessionMock(status: 200)
    _ = mock.dataTask(with: url) { _, _, _ in }
    await expectReport {
      await #expect(throws: WaitTimeoutError.self) {
        try await mock.waitForRequests(count: 1, timeout: .milliseconds(50))
      }
    } matching: { report in
      report.message.contains("Expected 1 request(s), but 0 were sent")
    }
  }

  @Test func aTimedOutWaitIsReportedAtTheCallersLine() async {
    let mock = URLSessionMock(status: 200)
    mock.dataTask(with: url) { _, _, _ in }.resume()
    // Not inside #expect: source locations in a macro's closure resolve to the macro's line.
    let line = #line + 3
    await expectReport {
      do {
        try await mock.waitForRequests(count: 2, timeout: .milliseconds(50))
        Issue.record("waitForRequests returned although only one request was sent")
      } catch {
        #expect(error is WaitTimeoutError)
      }
    } matching: { report in
      let text = report.message
      return text.contains("Expected 2 request(s), but 1 were sent")
        && text.contains(url.absoluteString) && report.line == line
    }
  }

  @Test func cancellingAWaitThrowsCancellationError() async {
    let mock = URLSessionMock(status: 200)
    let waiter = Task { try await mock.waitForRequests(count: 1, timeout: .seconds(3_600)) }
    waiter.cancel()
    let result = await waiter.result
    #expect(throws: CancellationError.self) { try result.get() }
  }

  // MARK: - Concurrency

  @Test func thousandsOfConcurrentRequestsFromManyTasksLoseNothing() async {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let counter = Shared([Int](repeating: 0, count: 4_000))
    await withTaskGroup(of: Void.self) { group in
      for worker in 0..<16 {
        group.addTask {
          for n in 0..<250 {
            let index = worker * 250 + n
            let url = URL(string: "https://api.example.com/n/\(index)")!
            mock.dataTask(with: url) { data, _, error in
              if data == Data("x".utf8), error == nil { counter.withLock { $0[index] += 1 } }
            }.resume()
          }
        }
      }
    }
    #expect(counter.current.allSatisfy { $0 == 1 })
    #expect(mock.requests.count == 4_000)
    #expect(Set(mock.requests.compactMap(\.url)).count == 4_000)
    #expect(mock.events.count == 12_000)
  }

  @Test func thousandsOfConcurrentAsyncRequestsAllAnswer() async throws {
    let mock = URLSessionMock(data: Data("x".utf8), response: nil, error: nil)
    let answered = try await withThrowingTaskGroup(of: Int.self) { group in
      for index in 0..<2_000 {
        group.addTask {
          let url = URL(string: "https://api.example.com/n/\(index)")!
          let (data, _) = try await mock.data(from: url)
          return data == Data("x".utf8) ? 1 : 0
        }
      }
      return try await group.reduce(0, +)
    }
    #expect(answered == 2_000)
    #expect(Set(mock.requests.compactMap(\.url)).count == 2_000)
  }

  @Test func concurrentResumesFromManyThreadsDeliverEachHandlerOnce() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data(), response: nil, error: nil, delay: .seconds(1), clock: clock)
    let counter = Shared([Int](repeating: 0, count: 3_000))
    let tasks = (0..<3_000).map { index in
      mock.dataTask(with: url) { _, _, _ in counter.withLock { $0[index] += 1 } }
    }
    DispatchQueue.concurrentPerform(iterations: tasks.count) { index in
      tasks[index].resume()
      tasks[index].resume()
    }
    #expect(mock.requests.count == 3_000)
    #expect(clock.pendingCount == 3_000)
    await clock.advance(by: .seconds(1))
    #expect(counter.current.allSatisfy { $0 == 1 })
  }

  @Test func cancelRacingDeliveryStillCallsEachHandlerExactlyOnce() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Data("ok".utf8), response: nil, error: nil, delay: .seconds(1), clock: clock)
    let counter = Shared([Int](repeating: 0, count: 2_000))
    let outcomes = Deliveries()
    let tasks = (0..<2_000).map { index in
      mock.dataTask(with: url) { data, response, error in
        counter.withLock { $0[index] += 1 }
        outcomes.handler(data, response, error)
      }
    }
    for task in tasks { task.resume() }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await clock.advance(by: .seconds(1)) }
      group.addTask {
        DispatchQueue.concurrentPerform(iterations: tasks.count) { tasks[$0].cancel() }
      }
    }
    #expect(counter.current.allSatisfy { $0 == 1 })
    #expect(
      outcomes.all.allSatisfy { delivery in
        delivery.urlError?.code == .cancelled || delivery.data == Data("ok".utf8)
      })
    #expect(tasks.allSatisfy { $0.state == .completed })
  }
}
