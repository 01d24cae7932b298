import Foundation
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the journal keeps of each exchange: the request as sent, the response head, the body,
/// the stub that answered and the door.
@Suite struct ExchangeTests {
  private let url = URL(string: "https://api.example.com/users/octocat")!

  @Test func aMockRecordsTheResponseTheBodyAndTheAnsweringStub() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .json(["login": "octocat"], headers: ["ETag": "v1"]))
    mock.dataTask(with: url) { _, _, _ in }.resume()

    let exchange = try #require(mock.exchanges.first)
    let http = try #require(exchange.httpResponse)
    #expect(http === exchange.response)
    #expect(exchange.taskIdentifier == 1)
    #expect(exchange.request.url == url)
    #expect(http.statusCode == 200)
    #expect(http.value(forHTTPHeaderField: "ETag") == "v1")
    #expect(exchange.body == Data(#"{"login":"octocat"}"#.utf8))
    #expect(exchange.bodyByteCount == 19)
    #expect(exchange.error == nil)
    #expect(exchange.answeredBy?.hasPrefix("GET /users/{login} (registered at ") == true)
    #expect(exchange.answeredBy?.hasSuffix("ExchangeTests.swift:16)") == true)
    #expect(exchange.door == .injected)
  }

  @Test func theDoorIsAnEnumWhoseDescriptionIsItsName() {
    let names = [Door.injected, .urlProtocol, .server].map { door -> String in
      switch door {
      case .injected: return "injected: \(door)"
      case .urlProtocol: return "URLProtocol: \(door)"
      case .server: return "server: \(door)"
      }
    }
    #expect(names == ["injected: injected", "URLProtocol: URLProtocol", "server: server"])
  }

  @Test func aForwardingSpyRecordsWhatTheWrappedSessionAnswered() throws {
    let backend = URLSessionMock()
    backend.stub(.get("/users/{login}"), with: .text("hi", status: 203))
    let spy = SpySession(wrapping: backend)
    spy.dataTask(with: url) { _, _, _ in }.resume()

    let exchange = try #require(spy.exchanges.first)
    #expect((exchange.response as? HTTPURLResponse)?.statusCode == 203)
    #expect(exchange.body == Data("hi".utf8))
    #expect(exchange.answeredBy == nil)  // the spy has no stubs; the backend's exchange says
    #expect(backend.exchanges.first?.answeredBy?.hasPrefix("GET /users/{login}") == true)
  }

  @Test func errorsAndUnmatchedRequestsAreExchangesWithoutAResponse() throws {
    let mock = URLSessionMock()
    mock.stub(.get("/down"), with: .error(URLError(.notConnectedToInternet)))
    mock.dataTask(with: URL(string: "https://a.example/down")!) { _, _, _ in }.resume()
    expectReport(containing: "No stub matches GET https://a.example/else") {
      mock.dataTask(with: URL(string: "https://a.example/else")!) { _, _, _ in }.resume()
    }

    let exchanges = mock.exchanges
    #expect(exchanges.count == 2)
    #expect((exchanges[0].error as? URLError)?.code == .notConnectedToInternet)
    #expect(exchanges[0].response == nil)
    #expect((exchanges[1].error as? URLError)?.code == .resourceUnavailable)
    #expect(exchanges[1].answeredBy == nil)
  }

  @Test func longBodiesAreCutAtTheLimitWithTheirSizeKept() throws {
    let big = Data(repeating: 7, count: Exchange.bodyLimit + 10)
    let mock = URLSessionMock()
    mock.stub(.any, with: .data(big))
    let seen = Deliveries()
    mock.dataTask(with: url, completionHandler: seen.handler).resume()

    let exchange = try #require(mock.exchanges.first)
    #expect(exchange.body?.count == Exchange.bodyLimit)
    #expect(exchange.bodyByteCount == big.count)
    #expect(seen.first?.data?.count == big.count)  // the code under test gets it all
  }
}
