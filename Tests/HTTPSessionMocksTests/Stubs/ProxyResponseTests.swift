import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `StubResponse.proxy(to:through:addingHeaders:removingHeaders:)` through the injected door,
/// with another double as the upstream.
@Suite struct ProxyResponseTests {
  @Test func theRequestGoesUpstreamWithItsMethodPathQueryHeadersAndBody() throws {
    let upstream = URLSessionMock()
    upstream.stub(.post("/v2/items")) { request in
      .text("made", status: 201, headers: ["X-Upstream": "yes", "Content-Type": "text/x-made"])
    }
    let mock = URLSessionMock()
    mock.stub(
      .post("/items"),
      with: .proxy(
        to: URL(string: "https://up.test/v2/")!, through: upstream,
        addingHeaders: ["X-Added": "1", "x-replaced": "new"], removingHeaders: ["x-secret"]))

    let answer = route(
      mock, "POST", "https://api.test/items?b=2&a=1",
      headers: [
        "X-Secret": "s", "X-Replaced": "old", "X-Keep": "k", "Host": "api.test",
        "Content-Length": "4",
      ],
      body: Data("body".utf8))

    #expect(answer.status == 201)
    #expect(answer.text == "made")
    #expect(answer.header("X-Upstream") == "yes")
    #expect(answer.header("Content-Type") == "text/x-made")
    let sent = try #require(upstream.requests.first)
    #expect(upstream.requests.count == 1)
    #expect(sent.url?.absoluteString == "https://up.test/v2/items?b=2&a=1")
    #expect(sent.httpMethod == "POST")
    #expect(sent.httpBody == Data("body".utf8))
    #expect(sent.value(forHTTPHeaderField: "X-Added") == "1")
    #expect(sent.value(forHTTPHeaderField: "X-Replaced") == "new")
    #expect(sent.value(forHTTPHeaderField: "X-Keep") == "k")
    #expect(sent.value(forHTTPHeaderField: "X-Secret") == nil)
    #expect(sent.value(forHTTPHeaderField: "Host") == nil)
    #expect(sent.value(forHTTPHeaderField: "Content-Length") == nil)
    // The proxying mock records the request it got, answered by its stub.
    let exchange = try #require(mock.exchanges.first)
    #expect(exchange.request.url?.absoluteString == "https://api.test/items?b=2&a=1")
    #expect(exchange.answeredBy?.contains("POST /items") == true)
    #expect((exchange.response as? HTTPURLResponse)?.statusCode == 201)
    #expect(mock.unmatchedRequests.isEmpty)
  }

  @Test func theUpstreamsStatusesAndErrorsComeAsTheyAre() {
    let upstream = URLSessionMock()
    upstream.stub(.get("/busy"), with: .status(503, headers: ["Retry-After": "3"]))
    upstream.stub(.get("/moved"), with: .status(302, headers: ["Location": "/elsewhere"]))
    upstream.stub(.get("/elsewhere"), with: .text("followed"))
    upstream.stub(.get("/down"), with: .error(URLError(.timedOut)))
    let mock = URLSessionMock()
    mock.stub(.any, with: .proxy(to: URL(string: "https://up.test")!, through: upstream))

    let busy = route(mock, "GET", "https://api.test/busy")
    #expect(busy.status == 503)
    #expect(busy.header("Retry-After") == "3")
    // The upstream session follows its redirects, as a mock's injected door does.
    #expect(route(mock, "GET", "https://api.test/moved").text == "followed")
    #expect(route(mock, "GET", "https://api.test/down").urlErrorCode == .timedOut)
  }

  @Test func anUnmatchedRequestPolicyCanProxy() throws {
    let upstream = URLSessionMock()
    upstream.stub(.get("/live"), with: .text("from upstream"))
    let mock = URLSessionMock()
    mock.stub(.get("/local"), with: .text("local"))
    mock.unmatchedRequestPolicy = .respond(
      with: .proxy(to: URL(string: "https://up.test")!, through: upstream))

    #expect(route(mock, "GET", "https://api.test/local").text == "local")
    #expect(route(mock, "GET", "https://api.test/live").text == "from upstream")
    #expect(mock.unmatchedRequests.map(\.url?.path) == ["/live"])
    #expect(upstream.requests.map(\.url?.absoluteString) == ["https://up.test/live"])
  }

  @Test func aDelayedOrDribbledProxyFailsTheRequestWithAReport() {
    let upstream = URLSessionMock()
    upstream.stub(.any, with: .text("x"))
    let proxy = StubResponse.proxy(to: URL(string: "https://up.test")!, through: upstream)
    for response in [
      proxy.delayed(by: .milliseconds(5)), proxy.dribbled(inChunks: 2, over: .milliseconds(4)),
    ] {
      let mock = URLSessionMock()
      mock.stub(.get("/p"), with: response)
      var answer = RoutedAnswer()
      expectReport(containing: "cannot be delayed or dribbled", "https://up.test") {
        answer = route(mock, "GET", "https://api.test/p")
      }
      #expect(answer.urlErrorCode == .resourceUnavailable)
    }
    #expect(upstream.requests.isEmpty)
  }

  @Test func aProxyThatLeadsBackToItsOwnMockIsReportedAsALoop() {
    let mock = URLSessionMock()
    mock.stub(.any, with: .proxy(to: URL(string: "https://api.test")!, through: mock))
    var answer = RoutedAnswer()
    expectReport(containing: "forwarded 16 times in a row") {
      answer = route(mock, "GET", "https://api.test/loop")
    }
    #expect(answer.urlErrorCode == .resourceUnavailable)
    mock.removeAllStubs()  // the stub holds the mock
  }

  @Test func proxiesCompareByTheirTargetHeadersAndSession() {
    let url = URL(string: "https://up.test")!
    let upstream = URLSessionMock()
    #expect(StubResponse.proxy(to: url) == .proxy(to: url))
    #expect(StubResponse.proxy(to: url, through: upstream) == .proxy(to: url, through: upstream))
    #expect(StubResponse.proxy(to: url, through: upstream) != .proxy(to: url))
    #expect(
      StubResponse.proxy(to: url, through: upstream) != .proxy(to: url, through: URLSessionMock()))
    #expect(StubResponse.proxy(to: url) != .proxy(to: url, addingHeaders: ["A": "1"]))
    #expect(StubResponse.proxy(to: url) != .proxy(to: url, removingHeaders: ["A"]))
    #expect(StubResponse.proxy(to: url) != .proxy(to: URL(string: "https://other.test")!))
    #expect(StubResponse.proxy(to: url) != .text(""))
  }
}
