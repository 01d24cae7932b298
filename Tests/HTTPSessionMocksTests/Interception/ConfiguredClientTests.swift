import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A client library shaped like Alamofire's `Session`: it builds and owns its `URLSession`
/// from a configuration, adds default headers to every request and encodes JSON bodies. The
/// test cannot inject anything into it but the configuration.
private final class MiniAlamofire: Sendable {
  struct Failure: Error {
    let status: Int
  }

  private let session: URLSession
  private let defaultHeaders: [String: String]

  init(configuration: URLSessionConfiguration = .default) {
    session = URLSession(configuration: configuration)
    defaultHeaders = [
      "Accept": "application/json",
      "Accept-Language": "en;q=1.0",
      "User-Agent": "MiniAlamofire/1.0",
    ]
  }

  func request<Body: Encodable>(
    _ url: URL, method: String, json body: Body? = nil as String?
  ) async throws -> (Data, HTTPURLResponse) {
    var request = URLRequest(url: url)
    request.httpMethod = method
    for (name, value) in defaultHeaders { request.setValue(value, forHTTPHeaderField: name) }
    if let body {
      let encoder = JSONEncoder()
      encoder.outputFormatting = .sortedKeys
      request.httpBody = try encoder.encode(body)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await session.data(for: request)
    guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
    guard (200..<300).contains(http.statusCode) else { throw Failure(status: http.statusCode) }
    return (data, http)
  }
}

private struct NewRepository: Codable, Equatable {
  var name: String
  var isPrivate: Bool
}

@Suite struct ConfiguredClientTests {
  @Test func aClientThatOwnsItsSessionIsAnsweredAndVerified() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .post("/user/repos").header("Content-Type", "application/json")
        .jsonBody(NewRepository(name: "demo", isPrivate: true)),
      with: .json(["id": 7], status: 201))
    mock.stub(.get("/user/repos"), with: .json([["id": 7]]))
    let configuration = URLSessionConfiguration.ephemeral
    mock.intercept(configuration)
    let client = MiniAlamofire(configuration: configuration)

    let base = URL(string: "https://api.github.com/user/repos")!
    let (created, response) = try await client.request(
      base, method: "POST", json: NewRepository(name: "demo", isPrivate: true))
    #expect(response.statusCode == 201)
    #expect(String(decoding: created, as: UTF8.self).contains("7"))
    _ = try await client.request(base, method: "GET")

    #expect(
      mock.verify(
        .post("/user/repos").header("User-Agent", "MiniAlamofire/1.0")
          .header("Accept-Language", "en;q=1.0")
          .jsonBody(NewRepository(name: "demo", isPrivate: true)), called: .once))
    #expect(mock.verify(.get("/user/repos").header("Accept", "application/json"), called: .once))
    #expect(mock.verifyInOrder([.post("/user/repos"), .get("/user/repos")]))
    #expect(mock.verifyNoUnmatchedRequests())
  }

  @Test func theClientSeesStubbedFailuresAsItsOwnErrors() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/teapot"), with: .status(418))
    mock.stub(.get("/offline"), with: .error(URLError(.notConnectedToInternet)))
    let configuration = URLSessionConfiguration.ephemeral
    mock.intercept(configuration)
    let client = MiniAlamofire(configuration: configuration)
    await #expect {
      _ = try await client.request(URL(string: "https://x.test/teapot")!, method: "GET")
    } throws: { ($0 as? MiniAlamofire.Failure)?.status == 418 }
    await #expect {
      _ = try await client.request(URL(string: "https://x.test/offline")!, method: "GET")
    } throws: { ($0 as? URLError)?.code == .notConnectedToInternet }
  }

  /// A URLProtocol does not see the configuration's `httpAdditionalHeaders`, so the bridge
  /// adds those it read where the configuration was intercepted, as URLSession sends them (the
  /// request's own value wins); headers set on the configuration after that stay unseen, as
  /// the Interception article says.
  @Test func theConfigurationsAdditionalHeadersReachTheMockWhenSetBeforeIntercepting()
    async throws
  {
    let mock = URLSessionMock()
    mock.stub(.get("/h").header("X-From-Configuration", "1"), with: .status(204))
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpAdditionalHeaders = ["X-From-Configuration": "1", "X-Both": "configuration"]
    mock.intercept(configuration)
    var request = URLRequest(url: URL(string: "https://x.test/h")!)
    request.setValue("1", forHTTPHeaderField: "X-From-Request")
    request.setValue("request", forHTTPHeaderField: "X-Both")
    _ = try await URLSession(configuration: configuration).data(for: request)
    let recorded = try #require(mock.requests.first)
    #expect(recorded.value(forHTTPHeaderField: "X-From-Request") == "1")
    #expect(recorded.value(forHTTPHeaderField: "X-From-Configuration") == "1")
    #expect(recorded.value(forHTTPHeaderField: "X-Both") == "request")

    let late = URLSessionMock()
    late.stub(.any, with: .status(204))
    let unseen = URLSessionConfiguration.ephemeral
    late.intercept(unseen)
    unseen.httpAdditionalHeaders = ["X-Set-Late": "1"]
    _ = try await URLSession(configuration: unseen).data(for: request)
    #expect(late.requests.first?.value(forHTTPHeaderField: "X-Set-Late") == nil)
  }
}
