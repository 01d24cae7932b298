import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct LoopbackServerTests {
  // MARK: - The door: same stubs, same answers

  @Test func aRealURLSessionGetsWhatTheInjectedMockGives() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
    mock.stub(.post("/items"), with: .text("made", status: 201, headers: ["X-Id": "7"]))
    let server = try mock.startServer()
    defer { server.stop() }
    var post = URLRequest(url: server.baseURL.appendingPathComponent("items"))
    post.httpMethod = "POST"
    post.httpBody = Data("{}".utf8)
    for path in ["users/octocat", "items"] {
      var wire =
        path == "items" ? post : URLRequest(url: server.baseURL.appendingPathComponent(path))
      let (wireData, wireResponse) = try await liveSession().data(for: wire)
      wire.url = URL(string: "https://api.example.com/\(path)")
      let (mockData, mockResponse) = try await mock.data(for: wire)
      let overWire = try #require(wireResponse as? HTTPURLResponse)
      let injected = try #require(mockResponse as? HTTPURLResponse)
      #expect(overWire.statusCode == injected.statusCode, "\(path)")
      #expect(wireData == mockData, "\(path)")
      for name in ["Content-Type", "X-Id"] {
        #expect(
          overWire.value(forHTTPHeaderField: name) == injected.value(forHTTPHeaderField: name),
          "\(path) \(name)")
      }
      #expect(overWire.value(forHTTPHeaderField: "Content-Length") == String(wireData.count))
    }
    #expect(mock.verify(.get("/users/octocat"), called: .exactly(2)))
    #expect(mock.verify(.post("/items"), called: .exactly(2)))
  }

  @Test func anUnmatchedRequestGets404WithTheReportAndFailsTheScopeThatReadTheAddress()
    async throws
  {
    // The mock and the server are made outside the capture scope, and the request comes from a
    // real URLSession, on URL loading's threads: only the context the server captured when the
    // scope read `baseURL` can bring the report into the scope. Without it, the report would
    // be recorded as a real issue outside the scope and this test would fail.
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .status(200))
    let server = try mock.startServer()
    defer { server.stop() }
    let ((data, response), reports) = try await withCapturedReports {
      try await liveSession().data(from: server.baseURL.appendingPathComponent("user/octocat"))
    }
    #expect((response as? HTTPURLResponse)?.statusCode == 404)
    #expect(
      (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")
        == "text/plain; charset=utf-8")
    #expect(text(data).contains("/users/{login}"))
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("/user/octocat") == true)
    #expect(reports.first?.message.contains("The client received 404 Not Found") == true)
  }

  @Test func reportToCurrentTestBringsTheReportsIntoTheScopeThatCallsIt() async throws {
    // The address is read before the scope, as by an app launched earlier: only the explicit
    // call inside the scope can bring the report there. Without it, the report would be a real
    // issue outside the scope and this test would fail.
    let mock = URLSessionMock()
    let server = try mock.startServer()
    defer { server.stop() }
    let url = server.baseURL.appendingPathComponent("nope")
    let (response, reports) = try await withCapturedReports {
      server.reportToCurrentTest()
      return try await liveSession().data(from: url).1
    }
    #expect((response as? HTTPURLResponse)?.statusCode == 404)
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("/nope") == true)
  }

  /// A stub written for the real API's absolute URL misses on scheme, host and port over
  /// loopback: the report says how to serve it as that origin.
  @Test func aStubWithAnAbsoluteURLMissesWithAdviceToServeItsOrigin() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("https://api.example.com:8443/users/{login}"), with: .status(200))
    let server = try mock.startServer()
    defer { server.stop() }
    let ((data, response), reports) = try await withCapturedReports {
      try await liveSession().data(from: server.baseURL.appendingPathComponent("users/octocat"))
    }
    #expect((response as? HTTPURLResponse)?.statusCode == 404)
    let advice =
      #"Start the server with mock.startServer(origin: URL(string: "https://api.example.com:8443")!)"#
    #expect(text(data).contains(advice), "\(text(data))")
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains(advice) == true)
    // A path-only stub that misses gets no such advice.
    let plain = URLSessionMock()
    plain.stub(.get("/users/{login}"), with: .status(200))
    let plainServer = try plain.startServer()
    defer { plainServer.stop() }
    let ((missed, _), _) = try await withCapturedReports {
      try await liveSession().data(from: plainServer.baseURL.appendingPathComponent("user/x"))
    }
    #expect(!text(missed).contains("startServer(origin:"), "\(text(missed))")
  }

  @Test func theRecordedRequestHasTheServersURLTheHostHeaderAndTheBody() throws {
    let mock = URLSessionMock()
    mock.stub(.post("/items"), with: .status(201))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send(
      "POST /items?draft=1 HTTP/1.1\r\nHost: example.test:81\r\nX-A: b\r\nContent-Length: 5\r\n\r\nhello"
    )
    #expect(client.readResponse()?.status == 201)
    let recorded = try #require(mock.requests.first)
    #expect(recorded.url?.absoluteString == "\(server.baseURL.absoluteString)/items?draft=1")
    #expect(recorded.value(forHTTPHeaderField: "Host") == "example.test:81")
    #expect(recorded.value(forHTTPHeaderField: "X-A") == "b")
    #expect(recorded.httpMethod == "POST")
    #expect(recorded.httpBody == Data("hello".utf8))
  }

  @Test func absolutePatternsNamingTheServerMatch() async throws {
    let mock = URLSessionMock()
    let server = try mock.startServer()
    defer { server.stop() }
    mock.stub(.url("\(server.baseURL.absoluteString)/health"), with: .text("ok"))
    let (data, _) = try await liveSession().data(
      from: server.baseURL.appendingPathComponent("health"))
    #expect(text(data) == "ok")
  }

  // MARK: - HTTP/1.1 as clients use it

  @Test func chunkedRequestBodiesAreDecoded() throws {
    let mock = URLSessionMock()
    mock.stub(.post("/up")) { request in .data(request.httpBody ?? Data()) }
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send(
      "POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    )
    let response = try #require(client.readResponse())
    #expect(response.body == "hello world")
    #expect(mock.requests.first?.value(forHTTPHeaderField: "Transfer-Encoding") == nil)
  }

  @Test func expectContinueGets100BeforeTheBody() throws {
    let mock = URLSessionMock()
    mock.stub(.put("/x")) { request in .data(request.httpBody ?? Data()) }
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
    #expect(client.readResponse()?.status == 100)
    client.send("abc")
    let response = try #require(client.readResponse())
    #expect(response.status == 200)
    #expect(response.body == "abc")
  }

  @Test func keepAliveServesManyRequestsOnOneConnection() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/n"), with: .text("n"))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    for _ in 0..<5 {
      client.send("GET /n HTTP/1.1\r\nHost: a\r\n\r\n")
      #expect(client.readResponse()?.body == "n")
    }
    #expect(mock.requests.count == 5)
  }

  @Test func eachAnswerOnAKeptAliveConnectionHasItsOwnStubsHead() throws {
    // The connection reuses the head it built for the last response object: a different
    // stub, or the same stub for another URL, must not get it.
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("first", headers: ["X-Stub": "a"]))
    mock.stub(.get("/b/{n}"), with: .text("second", status: 201, headers: ["X-Stub": "b"]))
    mock.stub(.get("/none"), with: .status(204))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    let expected: [(String, Int, String?)] = [
      ("/a", 200, "a"), ("/a", 200, "a"), ("/b/1", 201, "b"), ("/b/2", 201, "b"),
      ("/none", 204, nil), ("/a", 200, "a"),
    ]
    for (path, status, stub) in expected {
      client.send("GET \(path) HTTP/1.1\r\nHost: a\r\n\r\n")
      let response = try #require(client.readResponse(), "\(path)")
      #expect(response.status == status, "\(path)")
      #expect(response.headers["x-stub"] == stub, "\(path)")
      #expect(
        response.headers["content-length"] == (status == 204 ? nil : "\(response.body.utf8.count)"),
        "\(path)")
    }
  }

  @Test func requestHeadersReachTheMockAsAddValueWouldStoreThem() throws {
    // The connection sets a request's headers at once, not with `addValue` per header (which
    // is slow): the mock must see exactly what `addValue` would have stored, names' spelling
    // included.
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(200))
    let server = try mock.startServer()
    defer { server.stop() }
    let sent = [
      ("host", "a"), ("x-tag", "one"), ("X-TAG", "two"), ("content-type", "text/plain"),
      ("AUTHORIZATION", "Bearer t"), ("x_under", "u"), ("Accept", "*/*"), ("x-tag", "three"),
    ]
    let client = try RawClient(port: server.port)
    for method in ["GET", "PATCH", "get"] {
      let head = sent.map { "\($0.0): \($0.1)\r\n" }.joined()
      client.send("\(method) /h HTTP/1.1\r\n\(head)\r\n")
      #expect(client.readResponse()?.status == 200, "\(method)")
    }
    var expected = URLRequest(url: URL(string: "http://127.0.0.1/h")!)
    for (name, value) in sent { expected.addValue(value, forHTTPHeaderField: name) }
    let requests = mock.requests
    try #require(requests.count == 3)
    #expect(requests.map(\.httpMethod) == ["GET", "PATCH", "GET"])
    for request in requests {
      #expect(request.allHTTPHeaderFields == expected.allHTTPHeaderFields)
      #expect(request.value(forHTTPHeaderField: "X-Tag") == "one,two,three")
    }
  }

  @Test func aStubsHeaderCannotSplitTheResponse() throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/evil"),
      with: .text(
        "ok",
        headers: ["X-Evil": "a\r\nInjected: 1\r\n\r\nbody", "X-Nul": "a\u{0}b", "Bad Name": "v"]))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    for _ in 0..<2 {  // the second answer comes from the connection's head cache
      client.send("GET /evil HTTP/1.1\r\nHost: a\r\n\r\n")
      let response = try #require(client.readResponse())
      #expect(response.status == 200)
      #expect(response.body == "ok")
      #expect(response.headers["x-evil"] == "aInjected: 1body")
      #expect(response.headers["x-nul"] == "ab")
      #expect(response.headers["injected"] == nil)
      #expect(response.headers["bad name"] == nil)
    }
  }

  @Test func aStubThatStopsTheServerBeforeAMissIsReportedOnce() throws {
    // `stop()` from a stub's closure lets go of the server's relay while this connection is
    // still recording on it: the report must land once, not loop (it once overflowed the
    // stack).
    let holder = Shared<LoopbackServer?>(nil)
    let mock = URLSessionMock()
    mock.stub(
      RequestMatcher("a matcher that stops the server") { _ in
        holder.current?.stop()
        return false
      }, with: .status(200))
    let server = try mock.startServer()
    holder.withLock { $0 = server }
    defer { server.stop() }
    let (_, reports) = try withCapturedReports {
      _ = try rawExchange(port: server.port, "GET /stop HTTP/1.1\r\nHost: a\r\n\r\n")
    }
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("/stop") == true)
  }

  @Test func pipelinedRequestsAreAnsweredInOrder() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("first"))
    mock.stub(.get("/b"), with: .text("second"))
    let server = try mock.startServer()
    defer { server.stop() }
    let raw = try rawExchange(
      port: server.port,
      "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n"
        + "GET /a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    let bodies = raw.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix(6) }
    #expect(bodies.map(String.init) == ["firstH", "second", "first"])
    #expect(mock.verifyInOrder([.get("/a"), .get("/b"), .get("/a")]))
  }

  @Test func connectionCloseAndHTTP10CloseAfterTheAnswer() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("x"))
    let server = try mock.startServer()
    defer { server.stop() }
    let closing = try rawExchange(
      port: server.port, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    #expect(closing.contains("Connection: close"))
    #expect(closing.hasSuffix("\r\n\r\nx"))
    let old = try rawExchange(port: server.port, "GET / HTTP/1.0\r\n\r\n")
    #expect(old.hasPrefix("HTTP/1.1 200 OK"))
    #expect(old.hasSuffix("\r\n\r\nx"))
    let client = try RawClient(port: server.port)
    client.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    #expect(client.readResponse()?.headers["connection"] == "keep-alive")
  }

  @Test func headGetsTheHeadersOnly() throws {
    let mock = URLSessionMock()
    mock.stub(.head("/file"), with: .text("twelve bytes"))
    mock.stub(.get("/after"), with: .text("next"))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("HEAD /file HTTP/1.1\r\nHost: a\r\n\r\nGET /after HTTP/1.1\r\nHost: a\r\n\r\n")
    let head = try #require(client.readResponse(head: true))
    #expect(head.headers["content-length"] == "12")
    // The next response starts right after the head: no body bytes came in between.
    #expect(client.readResponse()?.body == "next")
  }

  @Test func aStubsTransferEncodingIsDroppedAndContentLengthComputed() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("body", headers: ["Transfer-Encoding": "chunked"]))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    let response = try #require(client.readResponse())
    #expect(response.headers["transfer-encoding"] == nil)
    #expect(response.headers["content-length"] == "4")
  }

  // MARK: - Time and faults

  @Test func delayedAnswersAreWrittenWhenTheVirtualClockAdvances() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(30)))
    let server = try mock.startServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    try await mock.waitForRequests(count: 1)
    await clock.advance(by: .seconds(30))
    #expect(client.readToEnd().hasSuffix("\r\n\r\nlate"))
  }

  @Test func aLostConnectionFaultClosesWithoutAResponse() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .error(URLError(.networkConnectionLost)))
    let server = try mock.startServer()
    defer { server.stop() }
    #expect(try rawExchange(port: server.port, "GET / HTTP/1.1\r\nHost: a\r\n\r\n") == "")
    #expect(mock.requests.count == 1)
  }

  @Test func aBadServerResponseFaultWritesBytesThatAreNotHTTP() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/bad"), with: .error(URLError(.badServerResponse)))
    mock.stub(.get("/unparsable"), with: .error(URLError(.cannotParseResponse)))
    let server = try mock.startServer()
    defer { server.stop() }
    for path in ["/bad", "/unparsable"] {
      let raw = try rawExchange(port: server.port, "GET \(path) HTTP/1.1\r\nHost: a\r\n\r\n")
      #expect(!raw.isEmpty, "\(path)")
      #expect(!raw.hasPrefix("HTTP/"), "\(path)")
    }
  }

  @Test func aTimedOutFaultHoldsTheConnectionSilentUntilTheServerStops() async throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .error(URLError(.timedOut)))
    let server = try mock.startServer()
    let client = try RawClient(port: server.port)
    client.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    try await mock.waitForRequests(count: 1)
    #expect(server.connectionCount == 1)
    server.stop()
    #expect(client.closedWithoutData())
    #expect(server.connectionCount == 0)
  }

  @Test func aRequestWaitingOnTheClockIsCancelledWhenTheServerStops() async throws {
    let clock = VirtualClock(stallTimeout: patientStallTimeout)
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/slow"), with: .text("late").delayed(by: .seconds(30)))
    let server = try mock.startServer()
    let client = try RawClient(port: server.port)
    client.send("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
    try await mock.waitForRequests(count: 1)
    server.stop()
    #expect(mock.events.contains { $0.kind == .cancelled })
    // The answer that comes due afterwards goes nowhere: the connection is gone.
    await clock.advance(by: .seconds(30))
    #expect(client.closedWithoutData())
  }

  // MARK: - Malformed requests

  @Test(arguments: [
    "GARBAGE\r\n\r\n",
    "GET / HTTP/3.0\r\nHost: a\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a\r\nX-A: one\r\n two\r\n\r\n",
    "GET / HTTP/1.1\nHost: a\n\n",
    "GET / HTTP/1.1\r\nHost: a\0\r\n\r\n",
    "GÉT / HTTP/1.1\r\nHost: a\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: five\r\n\r\nhello",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n",
    "GET / HTTP/1.1\r\n\r\n",
  ])
  func malformedRequestsGet400AndTheServerKeepsServing(_ attack: String) throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer()
    defer { server.stop() }
    let raw = try rawExchange(port: server.port, attack)
    #expect(raw.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "got \(raw.prefix(40))")
    #expect(raw.contains("Connection: close"))
    #expect(mock.requests.isEmpty)
    let next = try rawExchange(
      port: server.port, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    #expect(next.hasSuffix("fine"))
  }

  @Test func aClientThatDisconnectsMidBodyIsNotAnswered() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer()
    defer { server.stop() }
    do {
      let client = try RawClient(port: server.port)
      client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nonly part")
    }
    let next = try rawExchange(
      port: server.port, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    #expect(next.hasSuffix("fine"))
    #expect(mock.requests.count == 1)
  }

  // MARK: - Limits, injected short

  @Test func aHeadOverTheLimitGets431() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(maxHeadBytes: 256))
    defer { server.stop() }
    let big = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: \(String(repeating: "a", count: 300))\r\n\r\n"
    #expect(try rawExchange(port: server.port, big).hasPrefix("HTTP/1.1 431 "))
    let fits = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: \(String(repeating: "a", count: 100))\r\n\r\n"
    let client = try RawClient(port: server.port)
    client.send(fits)
    #expect(client.readResponse()?.status == 200)
  }

  @Test func theDefaultHeadLimitIs64KiB() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer()
    defer { server.stop() }
    #expect(server.limits.maxHeadBytes == 65_536)
    let big = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: \(String(repeating: "a", count: 70_000))\r\n\r\n"
    #expect(try rawExchange(port: server.port, big).hasPrefix("HTTP/1.1 431 "))
  }

  @Test func aBodyOverTheLimitGets413EvenWithExpectContinue() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(maxBodyBytes: 10))
    defer { server.stop() }
    let over = try rawExchange(
      port: server.port,
      "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n")
    #expect(over.hasPrefix("HTTP/1.1 413 "))
    let chunked = try rawExchange(
      port: server.port,
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"
    )
    #expect(chunked.hasPrefix("HTTP/1.1 413 "))
    #expect(mock.requests.isEmpty)
  }

  @Test func aConnectionOverTheLimitGets503WithRetryAfterAndIsClosed() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(maxConnections: 1))
    defer { server.stop() }
    let first = try RawClient(port: server.port)
    first.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(first.readResponse()?.body == "fine")
    let second = try RawClient(port: server.port)
    second.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    let refused = second.readResponse()
    #expect(refused?.status == 503)
    #expect(refused?.headers["connection"] == "close")
    #expect(refused?.headers["retry-after"] == "1")
    #expect(refused?.body.contains("1 connections open") == true)
    #expect(second.closedWithoutData())
    first.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(first.readResponse()?.body == "fine")
    #expect(mock.requests.count == 2)
    #expect(server.limits.maxConnections == 1)
    #expect(ServerLimits().maxConnections == 256)
  }

  @Test func aBodyStillArrivingAtItsDeadlineGets408AndTheConnectionCloses() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    // No minimum rate: only the total deadline can end a body whose bytes keep coming.
    let server = try mock.startServer(
      limits: ServerLimits(bodyTimeout: .milliseconds(100), minBodyBytesPerPeriod: 0))
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000\r\n\r\n")
    // A byte at a time, each once the server has had 10 ms to answer and has not; the body
    // never completes (a server without the deadline would wait for the rest).
    var sent = 0
    while sent < 1999, !client.hasDataToRead(withinMilliseconds: 10) {
      client.send("x")
      sent += 1
    }
    let answer = client.readResponse()
    #expect(answer?.status == 408)
    #expect(answer?.headers["connection"] == "close")
    #expect(answer?.body.contains("did not arrive within") == true)
    #expect(client.closedWithoutData())
    #expect(mock.requests.isEmpty)
    #expect(ServerLimits().bodyTimeout == .seconds(30))
  }

  @Test func aBodySlowerThanTheMinimumRateGets408() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(
      limits: ServerLimits(minBodyBytesPerPeriod: 1000, minBodyRatePeriod: .milliseconds(50)))
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nonly part")
    let answer = client.readResponse()
    #expect(answer?.status == 408)
    #expect(answer?.headers["connection"] == "close")
    #expect(answer?.body.contains("more slowly than 1000 bytes in") == true)
    #expect(client.closedWithoutData())
    #expect(mock.requests.isEmpty)
    #expect(ServerLimits().minBodyBytesPerPeriod == 4096)
    #expect(ServerLimits().minBodyRatePeriod == .seconds(5))
  }

  @Test func aSlowHeadIsDisconnected() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(headerTimeout: .milliseconds(100)))
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET / HTTP/1.1\r\nHost: a\r\n")
    #expect(client.closedWithoutData())
    #expect(mock.requests.isEmpty)
    #expect(ServerLimits().headerTimeout == .seconds(10))
  }

  @Test func anIdleKeepAliveConnectionIsClosed() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer(limits: ServerLimits(idleTimeout: .milliseconds(100)))
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(client.readResponse()?.body == "fine")
    #expect(client.closedWithoutData())
    #expect(ServerLimits().idleTimeout == .seconds(30))
  }

  /// Limits of any length, centuries or `Duration`'s largest: deadlines saturate instead of
  /// overflowing (`.seconds(18_446_744_073)` and a fraction made `now + timeout` trap in every
  /// connection's thread, and so the process).
  @Test(arguments: [
    Duration.seconds(18_446_744_073) + .nanoseconds(999_999_999),
    .seconds(Int64.max) + .nanoseconds(999_999_999), .seconds(Int64.max / 1000),
  ])
  func limitsOfAnyLengthServe(_ long: Duration) throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let limits = ServerLimits(
      headerTimeout: long, bodyTimeout: long, minBodyRatePeriod: long, idleTimeout: long,
      lingerTimeout: long)
    let server = try mock.startServer(limits: limits)
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi")
    #expect(client.readResponse()?.body == "fine")
    // A refusal lingers for `lingerTimeout`; the client's close ends it.
    let bad = try RawClient(port: server.port)
    bad.send("GET / HTTP/1.1\r\n\r\n")
    #expect(bad.readResponse()?.status == 400)
  }

  // MARK: - Static directories over the wire

  @Test func aServedDirectoryNeverLeaksOutsideItsRootOverTheWire() throws {
    let parent = try TemporaryFolder.scratch("wire")
    let root = parent.appendingPathComponent("site", isDirectory: true)
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    try Data("top secret".utf8).write(to: parent.appendingPathComponent("secret.txt"))
    try Data("<p>hi</p>".utf8).write(to: root.appendingPathComponent("index.html"))
    try FileManager.default.createSymbolicLink(
      at: root.appendingPathComponent("link.txt"),
      withDestinationURL: parent.appendingPathComponent("secret.txt"))
    let mock = URLSessionMock()
    mock.serveDirectory(root)
    let server = try mock.startServer()
    defer { server.stop() }
    let page = try rawExchange(
      port: server.port, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    #expect(page.hasPrefix("HTTP/1.1 200 OK") && page.hasSuffix("<p>hi</p>"))
    for path in [
      "/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/..\\secret.txt",
      "/..%5csecret.txt", "/index.html%00", "/link.txt", "/./../secret.txt",
    ] {
      let raw = try rawExchange(
        port: server.port, "GET \(path) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
      #expect(raw.hasPrefix("HTTP/1.1 4"), "\(path) got \(raw.prefix(30))")
      #expect(!raw.contains("top secret"), "\(path)")
    }
  }

  // MARK: - Lifecycle

  @Test func stopClosesOpenConnectionsAndIsIdempotent() throws {
    let mock = URLSessionMock()
    mock.stub(.any, with: .text("fine"))
    let server = try mock.startServer()
    let client = try RawClient(port: server.port)
    client.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(client.readResponse()?.body == "fine")
    server.stop()
    #expect(client.closedWithoutData())
    server.stop()
    #expect(throws: RawClientError.self) { _ = try RawClient(port: server.port) }
  }

  @Test func aReleasedServerStops() throws {
    let mock = URLSessionMock()
    var server: LoopbackServer? = try mock.startServer()
    let port = try #require(server?.port)
    server = nil
    #expect(throws: RawClientError.self) { _ = try RawClient(port: port) }
  }

  @Test func onlyLoopbackHostsMayBeBound() throws {
    let mock = URLSessionMock()
    for host in ["0.0.0.0", "192.168.1.10", "example.com", "::", "10.0.0.1", ""] {
      let error = #expect(throws: ServerError.self) { _ = try mock.startServer(host: host) }
      #expect(error?.code == .notLoopback, "\(host)")
      #expect(error?.description.contains("only binds loopback") == true)
    }
    #expect(throws: ServerError.self) { _ = try mock.startServer(port: 70_000) }
    for host in ["127.0.0.1", "127.0.0.2"] {
      let server = try mock.startServer(host: host)
      #expect(server.baseURL.absoluteString == "http://\(host):\(server.port)")
      server.stop()
    }
  }

  @Test func aServerStartedForLocalhostKeepsTheNameInItsAddresses() throws {
    // An app's App Transport Security refuses plain HTTP to an IP address (iOS 17, macOS 14),
    // so a server asked for localhost must hand out localhost, not the address it bound.
    for asked in ["localhost", "LocalHost"] {
      let mock = URLSessionMock()
      mock.stub(.get("/users/{login}"), with: .text("octocat"))
      let server = try mock.startServer(host: asked)
      defer { server.stop() }
      let port = server.port
      #expect(server.baseURL.absoluteString == "http://localhost:\(port)", "\(asked)")
      #expect(server.webSocketURL(for: "/chat").absoluteString == "ws://localhost:\(port)/chat")

      let client = try RawClient(port: port)  // localhost is bound on 127.0.0.1
      client.send("GET /users/octocat HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
      #expect(client.readResponse()?.body == "octocat", "\(asked)")
      let answered = server.baseURL.appendingPathComponent("users/octocat")
      #expect(mock.requests.first?.url == answered, "\(asked)")
      #expect(mock.verify(.get(answered.absoluteString), called: .once), "\(asked)")
    }
  }

  @Test func theIPv6LoopbackIsServedWhereTheSystemHasIt() throws {
    let mock = URLSessionMock()
    let server: LoopbackServer
    do {
      server = try mock.startServer(host: "::1")
    } catch let error as ServerError where error.code == .system {
      withKnownIssue("this system has no IPv6 loopback: \(error)") { throw error }
      return
    }
    #expect(server.baseURL.absoluteString.hasPrefix("http://[::1]:"))
    server.stop()
  }

  @Test func aServerErrorsLocalizedDescriptionSaysWhatHappened() throws {
    let error = #expect(throws: ServerError.self) {
      _ = try URLSessionMock().startServer(port: 70_000)
    }
    let described = try #require(error?.description)
    #expect(error?.localizedDescription == described)
    #expect(described.contains("70000 is not a TCP port"))
  }
}
