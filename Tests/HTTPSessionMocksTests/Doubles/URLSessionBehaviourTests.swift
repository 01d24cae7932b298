import Foundation
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What URLSession does with an answer, and the mock does too: it follows redirects, honours
/// the request's timeout on the mock's clock, sends no body for HEAD, and sets Content-Length.
@Suite struct URLSessionBehaviourTests {
  private func request(_ string: String, method: String = "GET", body: Data? = nil) -> URLRequest {
    var request = URLRequest(url: URL(string: string)!)
    request.httpMethod = method
    request.httpBody = body
    return request
  }

  // MARK: - Redirects

  @Test func aRedirectIsFollowedAndEachHopRoutedAndRecorded() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/old"), with: .status(302, headers: ["Location": "/new"]))
    mock.stub(.get("/new"), with: .text("moved here"))
    let seen = Deliveries()

    let task = mock.dataTask(
      with: request("https://a.example/old"), completionHandler: seen.handler)
    task.resume()

    let delivery = try #require(seen.first)
    #expect(delivery.statusCode == 200)
    #expect(delivery.response?.url?.absoluteString == "https://a.example/new")
    #expect(delivery.data == Data("moved here".utf8))
    #expect(mock.requests.map { $0.url?.path } == ["/old", "/new"])
    #expect(task.currentRequest.url?.path == "/new")
    #expect(task.originalRequest.url?.path == "/old")
    #expect(mock.exchanges.map { ($0.response as? HTTPURLResponse)?.statusCode } == [302, 200])
    mock.verify(.get("/old"), called: .once)
    mock.verify(.get("/new"), called: .once)
  }

  @Test(arguments: [301, 302, 303])
  func aPostRedirectedBy301302Or303BecomesAGetWithoutABody(status: Int) throws {
    let mock = URLSessionMock()
    mock.stub(.post("/form"), with: .status(status, headers: ["Location": "/done"]))
    mock.stub(.get("/done"), with: .status(200))
    let seen = Deliveries()

    mock.dataTask(
      with: request("https://a.example/form", method: "POST", body: Data("x=1".utf8)),
      completionHandler: seen.handler
    ).resume()

    #expect(seen.first?.statusCode == 200)
    let followUp = try #require(mock.requests.last)
    #expect(followUp.httpMethod == "GET")
    #expect(followUp.httpBody == nil)
  }

  @Test(arguments: [307, 308])
  func aPostRedirectedBy307Or308KeepsItsMethodAndBody(status: Int) throws {
    let mock = URLSessionMock()
    mock.stub(.post("/form"), with: .status(status, headers: ["Location": "/v2/form"]))
    mock.stub(.post("/v2/form"), with: .status(201))
    let seen = Deliveries()

    mock.dataTask(
      with: request("https://a.example/form", method: "POST", body: Data("x=1".utf8)),
      completionHandler: seen.handler
    ).resume()

    #expect(seen.first?.statusCode == 201)
    #expect(mock.requests.last?.httpBody == Data("x=1".utf8))
  }

  @Test func moreThanSixteenRedirectsFail() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/loop")) { _ in .status(302, headers: ["Location": "/loop"]) }
    let seen = Deliveries()

    mock.dataTask(with: request("https://a.example/loop"), completionHandler: seen.handler)
      .resume()

    #expect(seen.first?.urlError?.code == .httpTooManyRedirects)
    #expect(mock.requests.count == 17)
  }

  @Test func theAsGivenFormIsDeliveredExactlyAsGiven() throws {
    let url = URL(string: "https://a.example/old")!
    let redirect = HTTPURLResponse(
      url: url, statusCode: 302, httpVersion: nil, headerFields: ["Location": "/new"])
    let mock = URLSessionMock(data: nil, response: redirect, error: nil)
    let seen = Deliveries()

    mock.dataTask(with: url, completionHandler: seen.handler).resume()

    #expect(seen.first?.statusCode == 302)
    #expect(mock.requests.count == 1)
  }

  @Test func aRedirectWithoutLocationIsDeliveredAsIs() {
    let mock = URLSessionMock(status: 301)
    let seen = Deliveries()
    mock.dataTask(with: request("https://a.example/old"), completionHandler: seen.handler).resume()
    #expect(seen.first?.statusCode == 301)
  }

  @Test func delaysOfEveryHopAddUp() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/old"),
      with: StubResponse.status(302, headers: ["Location": "/new"]).delayed(by: .seconds(1)))
    mock.stub(.get("/new"), with: StubResponse.status(200).delayed(by: .seconds(2)))
    let seen = Deliveries()

    mock.dataTask(with: request("https://a.example/old"), completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(2))
    #expect(seen.count == 0)
    await clock.advance(by: .seconds(1))

    #expect(seen.first?.statusCode == 200)
  }

  // MARK: - Timeouts

  @Test func anAnswerLaterThanTheTimeoutFailsWithTimedOutAtTheTimeout() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(2)))
    var slow = request("https://a.example/slow")
    slow.timeoutInterval = 0.5
    let seen = Deliveries()

    mock.dataTask(with: slow, completionHandler: seen.handler).resume()
    await clock.advance(by: .milliseconds(499))
    #expect(seen.count == 0)
    await clock.advance(by: .milliseconds(1))

    let delivery = try #require(seen.first)
    #expect(delivery.urlError?.code == .timedOut)
    #expect(delivery.urlError?.failingURL == slow.url)
    #expect(delivery.response == nil)
    #expect(clock.now == VirtualClock.Instant(offset: .milliseconds(500)))
    #expect(clock.pendingCount == 0)
  }

  @Test func theTimeoutErrorCarriesTheFailingURLItsStringAndADescription() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(2)))
    var slow = request("https://a.example/slow?page=2")
    slow.timeoutInterval = 1
    let seen = Deliveries()

    mock.dataTask(with: slow, completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(1))

    let error = try #require(seen.first?.urlError) as NSError
    #expect(error.domain == NSURLErrorDomain)
    #expect(error.code == NSURLErrorTimedOut)
    #expect(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL == slow.url)
    #expect(error.userInfo["NSErrorFailingURLStringKey"] as? String == slow.url?.absoluteString)
    #expect(error.localizedDescription == "The request timed out.")
  }

  @Test func theDefaultTimeoutIsSixtySeconds() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(90)))
    let seen = Deliveries()

    mock.dataTask(with: request("https://a.example/slow"), completionHandler: seen.handler)
      .resume()
    await clock.advance(by: .seconds(60))

    #expect(seen.first?.urlError?.code == .timedOut)
  }

  @Test func anAnswerWithinTheTimeoutArrives() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.any, with: StubResponse.status(200).delayed(by: .seconds(2)))
    var patient = request("https://a.example/slow")
    patient.timeoutInterval = 2
    let seen = Deliveries()

    mock.dataTask(with: patient, completionHandler: seen.handler).resume()
    await clock.advance(by: .seconds(2))

    #expect(seen.first?.statusCode == 200)
  }

  // MARK: - HEAD and Content-Length

  @Test func headGetsTheHeadersAndNoBody() throws {
    let mock = URLSessionMock()
    mock.stub(.head("/file"), with: .text("twelve bytes"))
    let seen = Deliveries()

    mock.dataTask(
      with: request("https://a.example/file", method: "HEAD"), completionHandler: seen.handler
    )
    .resume()

    let delivery = try #require(seen.first)
    #expect(delivery.data == Data())
    let http = try #require(delivery.response as? HTTPURLResponse)
    #expect(http.value(forHTTPHeaderField: "Content-Length") == "12")
    #expect(http.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")
  }

  @Test func answersCarryContentLengthAndExpectedContentLength() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("hello"))
    mock.stub(.get("/b"), with: .data(Data(count: 3), headers: ["content-length": "99"]))
    let seen = Deliveries()

    mock.dataTask(with: request("https://a.example/a"), completionHandler: seen.handler).resume()
    mock.dataTask(with: request("https://a.example/b"), completionHandler: seen.handler).resume()

    let a = try #require(seen.all.first?.response as? HTTPURLResponse)
    #expect(a.value(forHTTPHeaderField: "Content-Length") == "5")
    #expect(a.expectedContentLength == 5)
    let b = try #require(seen.all.last?.response as? HTTPURLResponse)
    #expect(b.value(forHTTPHeaderField: "Content-Length") == "99")  // the stub's own wins
  }
}
