import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a stub answers: a status, a body, headers, an error, and optionally a delay.
///
/// ```swift
/// mock.stub(.get("/users/{login}"), with: .json(User(login: "octocat", id: 1)))
/// mock.stub(.get("/health"), with: .status(204))
/// mock.stub(.get("/readme"), with: .text("# Hello", headers: ["Content-Type": "text/markdown"]))
/// mock.stub(.get("/users"), with: .file("Fixtures/users.json", in: .module))
/// mock.stub(.get("/offline"), with: .error(URLError(.notConnectedToInternet)))
/// mock.stub(.get("/slow"), with: .json(user).delayed(by: .seconds(30)))
/// ```
///
/// HTTP answers get an `HTTPURLResponse` for the request's own URL. The JSON forms add
/// `Content-Type: application/json` and ``text(_:status:headers:)`` adds
/// `Content-Type: text/plain; charset=utf-8`, unless `headers` names a content type.
public struct StubResponse: Sendable {
  enum Content: @unchecked Sendable {
    // @unchecked Sendable: `URLResponse` and the errors are immutable once a stub holds them.
    case http(body: Data, status: Int, headers: [String: String])
    case raw(data: Data?, response: URLResponse?, error: (any Error)?)
    case error(any Error)
    case invalid(String)
  }

  /// The content and its response cache, in one object so that copying a response (as routing
  /// does for every request) is one retain.
  private let storage: Storage
  /// How long after `resume()` the answer arrives, on the mock's clock.
  public private(set) var delay: Duration?

  var content: Content { storage.content }

  init(_ content: Content, delay: Duration? = nil) {
    if case .http(_, let status, _) = content, !(100...999).contains(status) {
      self.storage = Storage(
        .invalid("\(status) is not an HTTP status code; use a code from 100 to 999."))
    } else {
      self.storage = Storage(content)
    }
    self.delay = delay
  }

  /// The answer as given, in DHURLSessionStub's form.
  ///
  /// With no error and no response, the answer gets status 200 for the request's URL. With an
  /// error, the response is `nil` unless one is given.
  public init(data: Data?, response: URLResponse?, error: (any Error)?) {
    self.init(.raw(data: data, response: response, error: error))
  }

  /// An empty body with status `code`.
  public static func status(_ code: Int, headers: [String: String] = [:]) -> StubResponse {
    StubResponse(.http(body: Data(), status: code, headers: headers))
  }

  /// `data` as the body.
  public static func data(_ data: Data, status: Int = 200, headers: [String: String] = [:])
    -> StubResponse
  {
    StubResponse(.http(body: data, status: status, headers: headers))
  }

  /// `value` encoded with `JSONEncoder`, with `Content-Type: application/json`.
  ///
  /// A value that cannot be encoded (a `Double.nan`, say) makes a response that fails the test
  /// when it is used, naming the error.
  public static func json(
    _ value: some Encodable & Sendable, status: Int = 200, headers: [String: String] = [:]
  ) -> StubResponse {
    do {
      let body = try JSONEncoder().encode(value)
      return StubResponse(.http(body: body, status: status, headers: jsonHeaders(headers)))
    } catch {
      return StubResponse(
        .invalid("The value for .json(...) cannot be encoded as JSON: \(sentence(error))"))
    }
  }

  /// A `JSONSerialization` object (dictionaries, arrays, strings, numbers, `NSNull`) as the
  /// body, with `Content-Type: application/json`.
  ///
  /// An object that JSON cannot represent makes a response that fails the test when it is used.
  public static func jsonObject(
    _ object: Any, status: Int = 200, headers: [String: String] = [:]
  ) -> StubResponse {
    // Wrapping in an array lets strings, numbers and null through as top-level fragments.
    guard JSONSerialization.isValidJSONObject([object]),
      let body = try? JSONSerialization.data(
        withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
    else {
      return StubResponse(
        .invalid(
          "The object for .jsonObject(...) cannot be represented as JSON: \(type(of: object)) "
            + "\(String(describing: object).prefix(200))."))
    }
    return StubResponse(.http(body: body, status: status, headers: jsonHeaders(headers)))
  }

  /// `text` encoded as UTF-8, with `Content-Type: text/plain; charset=utf-8`.
  public static func text(_ text: String, status: Int = 200, headers: [String: String] = [:])
    -> StubResponse
  {
    StubResponse(
      .http(
        body: Data(text.utf8), status: status,
        headers: withDefault(headers, contentType: "text/plain; charset=utf-8")))
  }

  /// The contents of the fixture file `name` (with its extension) in `bundle`, read now.
  ///
  /// ```swift
  /// // Package.swift: .testTarget(name: "MyTests", resources: [.copy("Fixtures")])
  /// mock.stub(.get("/users"), with: .file("Fixtures/users.json", in: .module))
  /// ```
  ///
  /// A missing or unreadable file makes a response that fails the test when it is used,
  /// naming the path it looked for. Files ending in `.json` get `Content-Type: application/json`.
  public static func file(
    _ name: String, in bundle: Bundle, status: Int = 200, headers: [String: String] = [:]
  ) -> StubResponse {
    let url =
      bundle.resourceURL?.appendingPathComponent(name)
      ?? bundle.bundleURL.appendingPathComponent(name)
    let candidates = [url, bundle.url(forResource: name, withExtension: nil)].compactMap { $0 }
    for candidate in candidates {
      if let body = try? Data(contentsOf: candidate) {
        let headers =
          candidate.pathExtension.lowercased() == "json" ? jsonHeaders(headers) : headers
        return StubResponse(.http(body: body, status: status, headers: headers))
      }
    }
    return StubResponse(
      .invalid(
        "The fixture file \"\(name)\" could not be read from \(url.path). Check the name (with "
          + "its extension) and that the file is a resource of the test target."))
  }

  /// A transport error: the handler gets `error` and no response.
  public static func error(_ error: any Error) -> StubResponse {
    StubResponse(.error(error))
  }

  /// This answer, arriving `delay` after `resume()` on the mock's clock.
  ///
  /// > Important: The delay runs on the clock the mock was made with. A mock made with
  /// > `URLSessionMock()` uses real time (`ContinuousClock`); to control it from the test, make
  /// > the mock with `URLSessionMock(clock: clock)` and advance that ``VirtualClock``, even
  /// > when the code under test was given the same clock.
  public func delayed(by delay: Duration) -> StubResponse {
    var copy = self
    copy.delay = delay
    return copy
  }

  private static func jsonHeaders(_ headers: [String: String]) -> [String: String] {
    withDefault(headers, contentType: "application/json")
  }

  private static func withDefault(_ headers: [String: String], contentType: String)
    -> [String: String]
  {
    if headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
      return headers
    }
    var result = headers
    result["Content-Type"] = contentType
    return result
  }

  /// The answer for `request`: the body, the response and the error to deliver, or the problem
  /// that makes this response unusable.
  func resolve(for request: URLRequest) -> Resolved {
    switch content {
    case .http(let body, let status, let headers):
      return .answer(body, cachedResponse(for: request, status: status, headers: headers), nil)
    case .raw(let data, let response, let error):
      if error != nil { return .answer(data, response, error) }
      return .answer(
        data, response ?? cachedResponse(for: request, status: 200, headers: [:]), nil)
    case .error(let error):
      return .answer(nil, nil, error)
    case .invalid(let problem):
      return .invalid(problem)
    }
  }

  enum Resolved {
    case answer(Data?, URLResponse?, (any Error)?)
    case invalid(String)
  }

  /// The response for `request`'s URL: the cached one when the URL is the same as last time
  /// (responses are immutable, so sharing one is safe), else a new one.
  private func cachedResponse(for request: URLRequest, status: Int, headers: [String: String])
    -> HTTPURLResponse?
  {
    let url = request.url ?? URL(fileURLWithPath: "/")
    if let cached = storage.lastResponse.withLock({ $0 }), cached.url == url {
      return cached.response
    }
    let response = HTTPURLResponse(
      url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
    if let response { storage.lastResponse.withLock { $0 = (url, response) } }
    return response
  }
}

extension StubResponse {
  /// What a response holds, shared by its copies.
  final class Storage: Sendable {
    let content: Content
    /// The last HTTP response made, reused while requests keep coming for the same URL.
    let lastResponse = Locked<(url: URL, response: HTTPURLResponse)?>(nil)

    init(_ content: Content) {
      self.content = content
    }
  }
}
