import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct StubResponseTests {
  private struct User: Codable, Equatable, Sendable {
    let login: String
    let id: Int
  }

  /// The answer a fresh mock gives to `GET https://api.example.com/resource` with `response`.
  private func answer(_ response: StubResponse) -> RoutedAnswer {
    let mock = URLSessionMock()
    mock.stub(.any, with: response)
    return route(mock, "GET", "https://api.example.com/resource")
  }

  // MARK: - HTTP answers

  @Test func statusHasAnEmptyBodyTheHeadersAndTheRequestURL() {
    let result = answer(.status(204, headers: ["X-Request-ID": "42"]))
    #expect(result.status == 204)
    #expect(result.data == Data())
    #expect(result.error == nil)
    #expect(result.header("X-Request-ID") == "42")
    #expect(result.header("Content-Type") == nil)
    #expect(result.response?.url?.absoluteString == "https://api.example.com/resource")
  }

  /// As URLSession reports them (and the loopback server writes them): a status without a body
  /// has no `Content-Length` and no body, whatever the stub holds; others count their body.
  @Test(arguments: [100, 101, 204, 304])
  func aStatusThatCarriesNoBodyHasNoContentLength(_ status: Int) {
    let result = answer(.data(Data("ignored".utf8), status: status))
    #expect(result.status == status)
    #expect(result.header("Content-Length") == nil)
    #expect(result.data == Data())
    #expect(answer(.status(200)).header("Content-Length") == "0")
    #expect(answer(.data(Data("abc".utf8), status: 205)).header("Content-Length") == "3")
  }

  @Test func dataIsTheBodyWithStatusAndHeaders() {
    let body = Data([0x00, 0x01, 0xFF])
    let result = answer(
      .data(body, status: 206, headers: ["Content-Type": "application/octet-stream"]))
    #expect(result.data == body)
    #expect(result.status == 206)
    #expect(result.header("Content-Type") == "application/octet-stream")
    #expect(answer(.data(body)).status == 200)
  }

  @Test func jsonEncodesTheValueAndSetsContentType() throws {
    let result = answer(.json(User(login: "octocat", id: 1), status: 201))
    #expect(result.status == 201)
    #expect(result.header("Content-Type") == "application/json")
    let data = try #require(result.data)
    #expect(try JSONDecoder().decode(User.self, from: data) == User(login: "octocat", id: 1))
  }

  @Test func jsonWithAnUnencodableValueFailsWhenUsedNotWhenMade() {
    let mock = URLSessionMock()
    let line = #line + 1
    mock.stub(.get("/ratio"), with: .json(["ratio": Double.nan]))
    expectReport {
      let result = route(mock, "GET", "https://e.com/ratio")
      #expect(result.urlErrorCode == .resourceUnavailable)
      #expect(result.response == nil)
    } matching: { report in
      let text = report.message
      return text.contains("The stub registered here cannot answer GET https://e.com/ratio")
        && text.contains("The value for .json(...) cannot be encoded as JSON")
        && report.line == line
    }
  }

  @Test func anUntypedObjectIsSerialisedWithSortedKeys() throws {
    let result = answer(.json(["b": 2, "a": [true, "x"], "c": NSNull()], status: 202))
    #expect(result.status == 202)
    #expect(result.header("Content-Type") == "application/json")
    #expect(result.text == #"{"a":[true,"x"],"b":2,"c":null}"#)
  }

  @Test func anUntypedObjectThatJSONCannotRepresentFailsWhenUsed() {
    let mock = URLSessionMock()
    mock.stub(.get("/when"), with: .json(["when": Date(timeIntervalSince1970: 0)] as [String: Any]))
    expectReport {
      #expect(route(mock, "GET", "https://e.com/when").urlErrorCode == .resourceUnavailable)
    } matching: { report in
      let text = report.message
      return text.contains("The object for .json(...) cannot be represented as JSON")
        && text.contains("Dictionary<String, Any>")
    }
  }

  @Test func textIsUTF8WithPlainTextContentType() {
    let result = answer(.text("héllo ✓", status: 418))
    #expect(result.status == 418)
    #expect(result.data == Data("héllo ✓".utf8))
    #expect(result.header("Content-Type") == "text/plain; charset=utf-8")
  }

  @Test func explicitContentTypeIsNotOverridden() {
    let json = answer(.json(["a": 1], headers: ["content-type": "application/vnd.api+json"]))
    #expect(json.header("Content-Type") == "application/vnd.api+json")
    // The stub's own content type, and the Content-Length the mock adds: no second type.
    #expect(json.response?.allHeaderFields.count == 2)
    #expect(json.header("Content-Length") == "7")

    let text = answer(.text("# Hi", headers: ["Content-Type": "text/markdown"]))
    #expect(text.header("Content-Type") == "text/markdown")

    let object = answer(.json(["a": 1], headers: ["CONTENT-TYPE": "text/json"]))
    #expect(object.header("Content-Type") == "text/json")

    let file = answer(
      .file("Fixtures/user.json", in: .module, headers: ["Content-Type": "text/plain"]))
    #expect(file.header("Content-Type") == "text/plain")
  }

  // MARK: - Files

  @Test func fileReadsTheFixtureFromTheBundle() throws {
    let result = answer(.file("Fixtures/user.json", in: .module, status: 203))
    #expect(result.status == 203)
    #expect(result.header("Content-Type") == "application/json")
    let data = try #require(result.data)
    #expect(try JSONDecoder().decode(User.self, from: data) == User(login: "octocat", id: 1))
  }

  @Test func missingFileFailsWhenUsedNamingThePath() {
    let mock = URLSessionMock()
    let line = #line + 1
    mock.stub(.get("/users"), with: .file("Fixtures/missing.json", in: .module))
    expectReport {
      let result = route(mock, "GET", "https://e.com/users")
      #expect(result.urlErrorCode == .resourceUnavailable)
      #expect(result.data == nil)
    } matching: { report in
      let text = report.message
      return text.contains("The fixture file \"Fixtures/missing.json\" could not be read from ")
        && text.contains("/Fixtures/missing.json.")
        && text.contains("is a resource of the test target")
        && report.line == line
    }
  }

  // MARK: - Errors

  @Test func errorDeliversTheErrorWithNoResponseOrData() {
    let result = answer(.error(URLError(.notConnectedToInternet)))
    #expect(result.delivered)
    #expect(result.urlErrorCode == .notConnectedToInternet)
    #expect(result.response == nil)
    #expect(result.data == nil)
  }

  @Test func errorMayBeAnyError() {
    struct Broken: Error, Equatable {}
    let result = answer(.error(Broken()))
    #expect(result.error as? Broken == Broken())
  }

  // MARK: - The DHURLSessionStub form

  @Test func rawFormWithNothingAnswers200ForTheRequestURL() {
    let result = answer(StubResponse(data: Data("x".utf8), response: nil, error: nil))
    #expect(result.status == 200)
    #expect(result.text == "x")
    #expect(result.response?.url?.absoluteString == "https://api.example.com/resource")
  }

  @Test func rawFormDeliversTheGivenResponseAsIs() throws {
    let given = try #require(
      HTTPURLResponse(
        url: URL(string: "https://elsewhere.example.com/x")!, statusCode: 302,
        httpVersion: "HTTP/1.1", headerFields: ["Location": "/y"]))
    let result = answer(StubResponse(data: nil, response: given, error: nil))
    #expect(result.response === given)
    #expect(result.data == nil)
  }

  @Test func rawFormWithAnErrorHasNoResponseUnlessGiven() throws {
    let failed = answer(StubResponse(data: nil, response: nil, error: URLError(.timedOut)))
    #expect(failed.urlErrorCode == .timedOut)
    #expect(failed.response == nil)

    let given = try #require(
      HTTPURLResponse(
        url: URL(string: "https://api.example.com/resource")!, statusCode: 500,
        httpVersion: nil, headerFields: nil))
    let both = answer(
      StubResponse(
        data: Data("partial".utf8), response: given, error: URLError(.networkConnectionLost)))
    #expect(both.urlErrorCode == .networkConnectionLost)
    #expect(both.response === given)
    #expect(both.text == "partial")
  }

  // MARK: - Delays

  @Test func delayedAnswerArrivesOnTheVirtualClock() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(30)))
    let box = Shared(RoutedAnswer())
    mock.dataTask(with: routingRequest("GET", "https://e.com/slow"), completionHandler: box.handler)
      .resume()
    #expect(!box.current.delivered)
    await clock.advance(by: .seconds(29))
    #expect(!box.current.delivered)
    await clock.advance(by: .seconds(1))
    #expect(box.current.text == "late")
    #expect(box.current.status == 200)
  }

  @Test func delayAppliesPerResponseInASequence() async {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/a"),
      with: [.error(URLError(.timedOut)).delayed(by: .seconds(10)), .status(200)])
    let first = Shared(RoutedAnswer())
    mock.dataTask(with: routingRequest("GET", "https://e.com/a"), completionHandler: first.handler)
      .resume()
    let second = route(mock, "GET", "https://e.com/a")
    #expect(second.status == 200)
    #expect(!first.current.delivered)
    await clock.advance(by: .seconds(10))
    #expect(first.current.urlErrorCode == .timedOut)
  }

  @Test func delayedKeepsTheAnswerAndRecordsTheDelay() {
    let plain = StubResponse.status(201)
    let delayed = plain.delayed(by: .milliseconds(250))
    #expect(plain.delay == nil)
    #expect(delayed.delay == .milliseconds(250))
    #expect(delayed.delayed(by: .seconds(1)).delay == .seconds(1))
  }

  // MARK: - Edge cases found in review

  @Test func anUntypedObjectMayBeATopLevelFragment() {
    #expect(answer(.json("text")).data == Data(#""text""#.utf8))
    #expect(answer(.json(42)).data == Data("42".utf8))
    #expect(answer(.json(NSNull())).data == Data("null".utf8))
  }

  @Test func aStatusOutsideHTTPsRangeFailsWhenUsed() {
    expectReport {
      let result = answer(.status(-1))
      #expect(result.urlErrorCode == .resourceUnavailable)
      #expect(result.response == nil)
    } matching: { report in
      report.message.contains("-1 is not an HTTP status code")
    }
  }

  @Test func aMultiLineBodyStaysOnOneLineOfTheReport() {
    let mock = URLSessionMock()
    mock.stub(.post("/other"), with: .status(200))
    expectReport {
      _ = route(mock, routingRequest("POST", "https://e.com/items", body: Data("a\nb".utf8)))
    } matching: { report in
      report.message.contains(#"body: "a\nb""#)
    }
  }
}

extension StubResponseTests {
  // MARK: - Faults, headers with several values, random delays

  @Test func eachFaultIsItsURLErrorOnTheInjectedDoor() {
    let expected: [(StubResponse.Fault, URLError.Code)] = [
      (.connectionResetByPeer, .networkConnectionLost), (.emptyResponse, .badServerResponse),
      (.malformedResponseChunk, .cannotParseResponse), (.randomDataThenClose, .cannotParseResponse),
    ]
    for (fault, code) in expected {
      let mock = URLSessionMock()
      mock.stub(.get("/f"), with: .fault(fault))
      let answer = route(mock, "GET", "https://e.com/f")
      #expect(answer.urlErrorCode == code, "\(fault)")
      #expect(answer.response == nil, "\(fault)")
    }
    #expect(StubResponse.fault(.malformedResponseChunk) != .fault(.randomDataThenClose))
    #expect(StubResponse.fault(.emptyResponse) == .fault(.emptyResponse))
  }

  @Test func aHeaderWithSeveralValuesIsJoinedInAnHTTPURLResponse() {
    let mock = URLSessionMock()
    mock.stub(
      .get("/login"), with: .status(204).header("Set-Cookie", values: ["a=1", "b=2"]))
    let answer = route(mock, "GET", "https://e.com/login")
    #expect(answer.header("Set-Cookie") == "a=1, b=2")
    let cookies = HTTPCookie.cookies(
      withResponseHeaderFields: ["Set-Cookie": answer.header("Set-Cookie") ?? ""],
      for: URL(string: "https://e.com/")!)
    #expect(cookies.map(\.name) == ["a", "b"])
    #expect(
      StubResponse.status(204).header("Set-Cookie", values: ["a=1", "b=2"])
        != .status(204).header("Set-Cookie", values: ["b=2", "a=1"]))
  }

  @Test func aReasonPhraseLeavesTheInjectedAnswerAsItIsAndTakesPartInEquality() {
    let mock = URLSessionMock()
    mock.stub(
      .get("/status"),
      with: .status(503, headers: ["Retry-After": "60"]).reasonPhrase("Down for maintenance"))
    let answer = route(mock, "GET", "https://e.com/status")
    #expect(answer.status == 503)
    #expect(answer.header("Retry-After") == "60")
    #expect(StubResponse.status(503).reasonPhrase("Down") == .status(503).reasonPhrase("Down"))
    #expect(StubResponse.status(503).reasonPhrase("Down") != .status(503))
    #expect(StubResponse.status(503).reasonPhrase("Down") != .status(503).reasonPhrase("Up"))
    // It survives a later header, and a later phrase replaces it.
    #expect(
      StubResponse.status(200).reasonPhrase("Fine").header("Set-Cookie", values: ["a=1", "b=2"])
        == .status(200).header("Set-Cookie", values: ["a=1", "b=2"]).reasonPhrase("Fine"))
    #expect(
      StubResponse.status(200).reasonPhrase("A").reasonPhrase("B") == .status(200).reasonPhrase("B")
    )
    // An error has no status line.
    let error = StubResponse.error(URLError(.timedOut))
    #expect(error.reasonPhrase("x") == error)
  }

  @Test func aReasonPhraseThatWouldSplitTheStatusLineFailsTheTestThatUsesIt() {
    let mock = URLSessionMock()
    mock.stub(.get("/split"), with: .status(200).reasonPhrase("OK\r\nX-Evil: 1"))
    expectReport {
      #expect(route(mock, "GET", "https://e.com/split").urlErrorCode == .resourceUnavailable)
    } matching: { report in
      report.message.contains(
        #"The reason phrase "OK\r\nX-Evil: 1" holds the control character U+000D"#)
    }
    for (phrase, code) in [("bell\u{7}", "U+0007"), ("del\u{7F}", "U+007F"), ("nul\0", "U+0000")] {
      mock.stub(.get("/bad"), with: .status(200).reasonPhrase(phrase))
      expectReport {
        #expect(route(mock, "GET", "https://e.com/bad").urlErrorCode == .resourceUnavailable)
      } matching: { report in
        report.message.contains("holds the control character \(code)")
      }
    }
    // Tabs, spaces, text beyond ASCII and the empty phrase are all allowed.
    for phrase in ["Tabs\tand spaces, é ✓", ""] {
      mock.stub(.get("/good"), with: .status(299).reasonPhrase(phrase))
      #expect(route(mock, "GET", "https://e.com/good").status == 299, "\(phrase.debugDescription)")
    }
  }

  @Test func aDelayDistributionRepeatsFromMockToMock() async throws {
    func delays(seed: UInt64) async throws -> [Duration] {
      let clock = VirtualClock()
      let mock = URLSessionMock(clock: clock)
      mock.stub(
        .get("/slow"),
        with: .status(200).delayed(
          by: .uniform(lower: .milliseconds(10), upper: .milliseconds(90), seed: seed)))
      var result: [Duration] = []
      for _ in 0..<5 {
        let box = Shared(RoutedAnswer())
        let start = clock.now
        mock.dataTask(
          with: routingRequest("GET", "https://e.com/slow"), completionHandler: box.handler
        )
        .resume()
        for _ in 0..<200 where !box.current.delivered {
          await clock.advance(by: .milliseconds(1))
        }
        #expect(box.current.delivered)
        result.append(start.duration(to: clock.now))
      }
      return result
    }
    let first = try await delays(seed: 7)
    #expect(try await delays(seed: 7) == first)
    #expect(try await delays(seed: 8) != first)
    #expect(first.allSatisfy { $0 >= .milliseconds(10) && $0 <= .milliseconds(91) })
    #expect(Set(first).count > 1)
  }

  @Test func aLogNormalDelayIsAroundItsMedian() {
    let distribution = DelayDistribution.logNormal(median: .milliseconds(80), sigma: 0.4, seed: 3)
    let delays = (1...200).map { distribution.delay(forCall: $0) }.sorted()
    let median = delays[100]
    #expect(median > .milliseconds(60) && median < .milliseconds(100))
    #expect(delays.allSatisfy { $0 >= .zero })
    let capped = DelayDistribution.logNormal(
      median: .milliseconds(80), sigma: 3, maximum: .milliseconds(100))
    #expect((1...200).allSatisfy { capped.delay(forCall: $0) <= .milliseconds(100) })
  }
}
