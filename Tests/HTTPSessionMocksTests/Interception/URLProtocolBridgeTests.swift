import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The mock behind a real `URLSession`, through the URLProtocol bridge.
@Suite struct URLProtocolBridgeTests {
  /// The same stubs, for a mock to be injected and one to be reached through a URLSession.
  private func stubbed(clock: VirtualClock? = nil) -> URLSessionMock {
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/users/{login}"), with: .json(["login": "octocat"], headers: ["X-Rate": "59"]))
    mock.stub(.post("/items").jsonBody(["name": "widget"]), with: .status(201))
    mock.stub(.get("/missing"), with: .status(404, headers: ["X-Why": "gone"]))
    mock.stub(.get("/offline"), with: .error(URLError(.notConnectedToInternet)))
    mock.stub(.get("/slow"), with: .error(URLError(.timedOut)))
    return mock
  }

  private var requests: [URLRequest] {
    [
      request("GET", "https://api.test/users/octocat", headers: ["Accept": "application/json"]),
      request(
        "POST", "https://api.test/items", headers: ["Content-Type": "application/json"],
        body: Data(#"{"name":"widget"}"#.utf8)),
      request("GET", "https://api.test/missing"),
      request("GET", "https://api.test/offline"),
      request("GET", "https://api.test/slow"),
    ]
  }

  // MARK: - Side by side

  @Test func theSameStubsAnswerAlikeInjectedAndThroughAURLSession() async throws {
    let injected = stubbed()
    let bridged = stubbed()
    let session = bridged.makeURLSession()
    for request in requests {
      let direct = await Seen.sending(request, through: injected)
      let real = await Seen.sending(request, through: session)
      #expect(real == direct, "\(request.httpMethod ?? "") \(request.url!)")
    }
    #expect(bridged.requests.map(\.url) == injected.requests.map(\.url))
    #expect(bridged.requests.map(\.httpMethod) == injected.requests.map(\.httpMethod))
    #expect(bridged.requests.map(\.httpBody) == injected.requests.map(\.httpBody))
    #expect(
      bridged.requests.map { $0.value(forHTTPHeaderField: "Content-Type") }
        == injected.requests.map { $0.value(forHTTPHeaderField: "Content-Type") })
    #expect(bridged.exchanges.map(\.door) == Array(repeating: .urlProtocol, count: 5))
    for mock in [injected, bridged] {
      #expect(mock.verify(.post("/items").jsonBody(["name": "widget"]), called: .once))
      #expect(mock.verifyInOrder([.get("/users/octocat"), .get("/missing"), .get("/slow")]))
      #expect(mock.verifyNoUnmatchedRequests())
      #expect(mock.verifyAllStubsUsed())
    }
  }

  @Test func stubbedErrorsArriveWithTheirCodes() async throws {
    let mock = URLSessionMock()
    let codes: [URLError.Code] = [
      .notConnectedToInternet, .timedOut, .cannotFindHost, .networkConnectionLost,
      .secureConnectionFailed,
    ]
    for (index, code) in codes.enumerated() {
      mock.stub(.get("/e\(index)"), with: .error(URLError(code)))
    }
    let session = mock.makeURLSession()
    for (index, code) in codes.enumerated() {
      let seen = await Seen.sending(request("GET", "https://x.test/e\(index)"), through: session)
      #expect(seen.errorCode == code)
    }
  }

  // MARK: - Every way URLSession hands out an answer

  @Test func completionHandlersGetStatusHeadersAndBody() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/hello"), with: .text("hello", status: 202, headers: ["X-A": "1"]))
    let session = mock.makeURLSession()
    let seen = Deliveries()
    session.dataTask(with: URL(string: "https://x.test/hello")!, completionHandler: seen.handler)
      .resume()
    let delivery = await seen.firstDelivery()
    #expect(delivery.statusCode == 202)
    #expect((delivery.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-A") == "1")
    #expect(delivery.data == Data("hello".utf8))
    #expect(delivery.error == nil)
    #expect(seen.count == 1)
  }

  @Test func asyncUploadGetsTheAnswerAndIsRecordedAsAnUpload() async throws {
    let mock = URLSessionMock()
    mock.stub(.put("/files/a"), with: .status(204))
    let session = mock.makeURLSession()
    let (_, response) = try await session.upload(
      for: request("PUT", "https://x.test/files/a"), from: Data("abc".utf8))
    #expect((response as? HTTPURLResponse)?.statusCode == 204)
    #expect(mock.events.first?.kind == .created(.upload))
    #expect(mock.verify(.put("/files/a"), called: .once))
  }

  @Test func delegatesSeeTheResponseTheBodyAndTheEnd() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/d"), with: .text("delegated", headers: ["X-D": "yes"]))
    let log = DelegateLog()
    let session = mock.makeURLSession(delegate: log)
    session.dataTask(with: URL(string: "https://x.test/d")!).resume()
    let error = await log.nextCompletion()
    #expect(error == nil)
    let response = try #require(log.receivedResponses.first as? HTTPURLResponse)
    #expect(response.statusCode == 200)
    #expect(response.value(forHTTPHeaderField: "X-D") == "yes")
    #expect(log.receivedPieces.reduce(Data(), +) == Data("delegated".utf8))
    #expect(log.completionCount == 1)
  }

  @Test func aDelegatesTaskFailsWithTheStubbedError() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/down"), with: .error(URLError(.networkConnectionLost)))
    let log = DelegateLog()
    let session = mock.makeURLSession(delegate: log)
    session.dataTask(with: URL(string: "https://x.test/down")!).resume()
    let error = await log.nextCompletion()
    #expect((error as? URLError)?.code == .networkConnectionLost)
    #expect(log.receivedResponses.isEmpty)
  }

  // MARK: - Request bodies

  @Test func aStreamedBodyIsReadAndRecordedInFull() async throws {
    let mock = URLSessionMock()
    mock.stub(.post("/echo")) { request in .data(request.httpBody ?? Data()) }
    let session = mock.makeURLSession()
    let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    var streamed = request("POST", "https://x.test/echo")
    streamed.httpBodyStream = InputStream(data: payload)
    let (data, _) = try await session.data(for: streamed)
    #expect(data == payload)
    #expect(mock.requests.first?.httpBody == payload)
    #expect(mock.requests.first?.httpBodyStream == nil)
  }

  @Test func aStreamedBodyOverTheLimitIsReportedNotLoaded() async throws {
    let limit = 64 << 20
    let stream = PatternStream(byteCount: limit + 1)
    await expectReport(containing: "larger than the 64 MiB", "POST https://x.test/big") {
      let mock = URLSessionMock()
      mock.stub(.post("/big"), with: .status(200))
      let session = mock.makeURLSession()
      var big = request("POST", "https://x.test/big")
      big.httpBodyStream = stream
      let seen = await Seen.sending(big, through: session)
      #expect(seen.errorCode == .dataLengthExceedsMaximum)
      // The refusal is the request's exchange in the journal; no stub answered it.
      #expect(mock.exchanges.count == 1)
      #expect((mock.exchanges.first?.error as? URLError)?.code == .dataLengthExceedsMaximum)
      #expect(mock.exchanges.first?.answeredBy == nil)
      #expect(mock.requests.map(\.url?.path) == ["/big"])
    }
    // It stopped reading at the limit rather than draining the stream.
    #expect(stream.bytesRead <= limit + (64 << 10))
  }

  @Test func aDeclaredLengthOverTheLimitIsRefusedWithoutReading() async throws {
    let stream = PatternStream(byteCount: 100 << 20)
    await expectReport(containing: "larger than the 64 MiB", "100 MiB") {
      let mock = URLSessionMock()
      mock.stub(.post("/big"), with: .status(200))
      var big = request("POST", "https://x.test/big", headers: ["Content-Length": "104857600"])
      big.httpBodyStream = stream
      let seen = await Seen.sending(big, through: mock.makeURLSession())
      #expect(seen.errorCode == .dataLengthExceedsMaximum)
    }
    #expect(stream.bytesRead == 0)
  }

  @Test func anUploadTasksInvisibleBodyIsExplainedInTheReport() async throws {
    await expectReport(containing: "URL loading never shows a URLProtocol the body", "httpBody") {
      let mock = URLSessionMock()
      mock.stub(.post("/items").jsonBody(["name": "widget"]), with: .status(201))
      let session = mock.makeURLSession()
      await #expect(throws: URLError.self) {
        _ = try await session.upload(
          for: request("POST", "https://x.test/items"), from: Data(#"{"name":"widget"}"#.utf8))
      }
      #expect(mock.requests.first?.httpBody == nil)
    }
  }

  @Test func aConfigurationsAdditionalHeadersAreMatchedAndRecordedAsURLSessionSendsThem()
    async throws
  {
    let mock = URLSessionMock()
    mock.stub(
      .get("/feed").header("Accept", "text/event-stream").header("Cache-Control", "no-cache"),
      with: .status(200))
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpAdditionalHeaders = [
      "Accept": "text/event-stream", "Cache-Control": "max-age=60",
    ]
    let seen = await Seen.sending(
      request("GET", "https://x.test/feed", headers: ["Cache-Control": "no-cache"]),
      through: mock.makeURLSession(configuration: configuration))

    #expect(seen.status == 200)
    let recorded = try #require(mock.requests.first)
    #expect(recorded.value(forHTTPHeaderField: "Accept") == "text/event-stream")
    #expect(recorded.value(forHTTPHeaderField: "Cache-Control") == "no-cache", "the request's own")
    #expect(
      mock.exchanges.first?.request.value(forHTTPHeaderField: "Accept") == "text/event-stream")
  }

  @Test func aHeaderSetOnTheConfigurationAfterItWasInterceptedIsExplainedOnce() async throws {
    let reports = await expectReport(containing: "httpAdditionalHeaders", "Accept") {
      let mock = URLSessionMock()
      mock.stub(.get("/feed").header("Accept", "text/event-stream"), with: .status(200))
      mock.stub(.get("/feed").header("Cache-Control", "no-cache"), with: .status(200))
      let configuration = URLSessionConfiguration.ephemeral
      mock.intercept(configuration)
      configuration.httpAdditionalHeaders = ["Accept": "text/event-stream"]
      let seen = await Seen.sending(
        request("GET", "https://x.test/feed"), through: URLSession(configuration: configuration))
      #expect(seen.errorCode == .resourceUnavailable)
    }
    let text = reports.map(\.message).joined()
    #expect(text.components(separatedBy: "httpAdditionalHeaders").count == 2, "said once")
  }

  @Test func anUnmatchedDataTaskReportNamesNoUploadLimit() async throws {
    let reports = await expectReport(containing: "No stub matches") {
      let mock = URLSessionMock()
      mock.stub(.post("/items").jsonBody(["name": "widget"]), with: .status(201))
      _ = await Seen.sending(
        request("POST", "https://x.test/items", body: Data("{}".utf8)),
        through: mock.makeURLSession())
    }
    #expect(reports.allSatisfy { !$0.message.contains("never shows a URLProtocol") })
  }

  // MARK: - Unmatched requests

  @Test func anUnmatchedRequestFailsAndIsReportedAtTheMocksLine() async throws {
    let line = #line + 4
    let reports = await expectReport(
      containing: "No stub matches GET http://127.0.0.1:9/user/octocat"
    ) {
      let mock = URLSessionMock()
      mock.stub(.get("/users/{login}"), with: .status(200))
      let session = mock.makeURLSession()
      let seen = await Seen.sending(
        request("GET", "http://127.0.0.1:9/user/octocat"), through: session)
      #expect(seen.errorCode == .resourceUnavailable)
      #expect(mock.unmatchedRequests.count == 1)
    }
    #expect(reports.first?.line == line)
  }

  @Test func anUnmatchedReportReachesTheTestThatMadeTheRequest() async throws {
    // The mock is made outside the capture scope, and URL loading runs the protocol on threads
    // of its own: only the test context that the bridge carries from `resume()` brings the
    // report into the scope.
    let mock = URLSessionMock()
    let session = mock.makeURLSession()
    let reports = await capturedReports {
      let seen = await Seen.sending(request("GET", "https://x.test/nothing"), through: session)
      #expect(seen.errorCode == .resourceUnavailable)
    }
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("No stub matches GET https://x.test/nothing") == true)
  }

  @Test func anInterceptedDefaultConfigurationReportsInTheTestToo() async throws {
    // `.default` comes with the shared URL cache, whose lookup would make the protocol object
    // on a background thread: `intercept` turns it off.
    let mock = URLSessionMock()
    let configuration = URLSessionConfiguration.default
    mock.intercept(configuration)
    #expect(configuration.urlCache == nil)
    let session = URLSession(configuration: configuration)
    let reports = await capturedReports {
      _ = await Seen.sending(request("GET", "https://x.test/uncached"), through: session)
    }
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("https://x.test/uncached") == true)
  }

  @Test func theUnmatchedRequestPolicyAnswersThroughTheSessionToo() async throws {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(418))
    let seen = await Seen.sending(
      request("GET", "https://x.test/any"), through: mock.makeURLSession())
    #expect(seen.status == 418)
    #expect(mock.unmatchedRequests.count == 1)
  }

  @Test func aSessionWhoseMockWasReleasedFailsItsRequests() async throws {
    var mock: URLSessionMock? = URLSessionMock()
    mock?.stub(.any, with: .status(200))
    let session = try #require(mock?.makeURLSession())
    mock = nil
    let seen = await Seen.sending(request("GET", "https://x.test/a"), through: session)
    #expect(seen.errorCode == .resourceUnavailable)
  }

  // MARK: - Time and cancellation

  @Test func delaysRunOnTheMocksVirtualClock() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(5)))
    let session = mock.makeURLSession()
    let seen = Deliveries()
    session.dataTask(with: URL(string: "https://x.test/slow")!, completionHandler: seen.handler)
      .resume()
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(4))
    #expect(seen.count == 0)
    await clock.advance(by: .seconds(1))
    #expect(await seen.firstDelivery().data == Data("late".utf8))
  }

  @Test func cancellingTheURLSessionTaskStopsTheDelivery() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(10)))
    let session = mock.makeURLSession()
    let seen = Deliveries()
    let task = session.dataTask(
      with: URL(string: "https://x.test/slow")!, completionHandler: seen.handler)
    task.resume()
    try await mock.waitForRequests(count: 1)
    task.cancel()
    #expect(await seen.firstDelivery().urlError?.code == .cancelled)
    await clock.advance(by: .seconds(20))
    #expect(mock.events.contains { $0.kind == .cancelled })
    #expect(!mock.exchanges.contains { ($0.response as? HTTPURLResponse)?.statusCode == 200 })
    #expect(seen.count == 1)
  }

  @Test func cancellingTheSwiftTaskStopsTheDelivery() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(10)))
    let session = mock.makeURLSession()
    let call = Task { try await session.data(from: URL(string: "https://x.test/slow")!) }
    try await mock.waitForRequests(count: 1)
    call.cancel()
    await #expect { try await call.value } throws: { ($0 as? URLError)?.code == .cancelled }
    await clock.advance(by: .seconds(20))
    #expect(mock.events.contains { $0.kind == .cancelled })
  }

  @Test func aDribbledBodyReachesADelegateWhenTheClockHasMoved() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    let payload = Data((0..<1000).map { UInt8($0 % 251) })
    mock.stub(.get("/download"), with: .data(payload).dribbled(inChunks: 4, over: .seconds(4)))
    let log = DelegateLog()
    let session = mock.makeURLSession(delegate: log)
    session.dataTask(with: URL(string: "https://x.test/download")!).resume()
    try await mock.waitForRequests(count: 1)
    for _ in 0..<4 { await clock.advance(by: .seconds(1)) }
    #expect(await log.nextCompletion() == nil)
    #expect(log.receivedPieces.reduce(Data(), +) == payload)
    #if canImport(FoundationNetworking)
      #expect(log.receivedPieces.count == 1)  // Linux: one piece, at the end (see ProtocolSink)
    #else
      #expect(log.receivedPieces.count == 4)
    #endif
  }

  // MARK: - Redirects

  @Test func redirectsAreFollowedRecordedAndEndAtTheFinalURL() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/old"), with: .status(301, headers: ["Location": "/older"]))
    mock.stub(.get("/older"), with: .status(307, headers: ["Location": "https://x.test/new"]))
    mock.stub(.get("/new"), with: .text("moved"))
    let session = mock.makeURLSession()
    let seen = Deliveries()
    session.dataTask(with: URL(string: "https://x.test/old")!, completionHandler: seen.handler)
      .resume()
    let delivery = await seen.firstDelivery()
    #expect(delivery.data == Data("moved".utf8))
    #expect(delivery.response?.url?.absoluteString == "https://x.test/new")
    #expect(mock.verifyInOrder([.get("/old"), .get("/older"), .get("/new")]))
  }

  @Test func a303AfterAPostBecomesAGetWithoutTheBody() async throws {
    let mock = URLSessionMock()
    mock.stub(.post("/form"), with: .status(303, headers: ["Location": "/done"]))
    mock.stub(.get("/done"), with: .text("thanks"))
    let session = mock.makeURLSession()
    let (data, response) = try await session.data(
      for: request("POST", "https://x.test/form", body: Data("a=1".utf8)))
    #expect(data == Data("thanks".utf8))
    #expect(response.url?.path == "/done")
    #expect(mock.requests.map(\.httpMethod) == ["POST", "GET"])
    #expect(mock.requests.last?.httpBody == nil)
  }

  @Test func moreThanSixteenRedirectsFail() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/loop"), with: .status(302, headers: ["Location": "/loop"]))
    let seen = await Seen.sending(
      request("GET", "https://x.test/loop"), through: mock.makeURLSession())
    #expect(seen.errorCode == .httpTooManyRedirects)
    #expect(mock.requests.count == 17)
  }

  // MARK: - Downloads

  #if canImport(FoundationNetworking)
    @Test func aDownloadTaskFailsClearlyOnLinuxInsteadOfCrashing() async throws {
      await expectReport(containing: "download task", "#3367", "data task") {
        let mock = URLSessionMock()
        mock.stub(.get("/file"), with: .text("contents"))
        let session = mock.makeURLSession()
        let seen = Deliveries()
        session.downloadTask(
          with: URL(string: "https://x.test/file")!, completionHandler: seen.fileHandler
        ).resume()
        #expect(await seen.firstDelivery().urlError?.code == .unsupportedURL)
        await #expect(throws: URLError.self) {
          _ = try await session.download(for: request("GET", "https://x.test/file"))
        }
        // Each refusal is an exchange in the journal, with the error the code received.
        #expect(mock.exchanges.count == 2)
        #expect(
          mock.exchanges.allSatisfy { ($0.error as? URLError)?.code == .unsupportedURL })
        #expect(mock.events.filter { $0.kind == .created(.download) }.count == 2)
      }
    }
  #else
    @Test func downloadTasksWork() async throws {
      let mock = URLSessionMock()
      mock.stub(.get("/file"), with: .text("contents"))
      let (file, _) = try await mock.makeURLSession().download(
        for: request("GET", "https://x.test/file"))
      #expect(try Data(contentsOf: file) == Data("contents".utf8))
    }
  #endif

  // MARK: - Configurations

  @Test func interceptPutsTheMockFirstAndReplacesAnotherMock() throws {
    let first = URLSessionMock()
    let second = URLSessionMock()
    let configuration = URLSessionConfiguration.ephemeral
    let before = configuration.protocolClasses?.count ?? 0
    first.intercept(configuration)
    second.intercept(configuration)
    let classes = try #require(configuration.protocolClasses)
    #expect(classes.count == before + 1)
    second.intercept(configuration)
    #expect(configuration.protocolClasses?.count == before + 1)
    #expect(ObjectIdentifier(classes[0]) != ObjectIdentifier(URLProtocol.self))
  }

  @Test func aMocksSessionsShareOneProtocolClass() throws {
    let mock = URLSessionMock()
    let a: AnyClass = try #require(mock.makeURLSession().configuration.protocolClasses?.first)
    let b: AnyClass = try #require(mock.makeURLSession().configuration.protocolClasses?.first)
    let other: AnyClass = try #require(
      URLSessionMock().makeURLSession().configuration.protocolClasses?.first)
    #expect(ObjectIdentifier(a) == ObjectIdentifier(b))
    #expect(ObjectIdentifier(a) != ObjectIdentifier(other))
  }
}
