import Foundation

extension StubResponse {
  /// This answer with its body, its header values and its fixture file's name read as
  /// Handlebars templates, rendered for each request as WireMock's `response-template`
  /// transformer renders them.
  ///
  /// ```swift
  /// mock.stub(.post("/orders"), with: .json(["id": "{{jsonPath request.body '$.id'}}",
  ///   "created": "{{now format='yyyy-MM-dd'}}"]).header("Location", values: ["/orders/{{jsonPath request.body '$.id'}}"]).templated())
  /// mock.stub(.get("/orders/{id}"), with: .file("Fixtures/order-{{request.pathSegments.[1]}}.json", in: .module).templated())
  /// ```
  ///
  /// Templates read `request` (`url`, `path`, `pathSegments`, `query`, `headers`, `cookies`,
  /// `body`, `method`, `baseUrl`, `requestLine`) and the helpers WireMock 2.35.1 has
  /// (<doc:WireMockFormat#Response-templating> lists them). `now` reads the mock's clock: on a
  /// ``VirtualClock`` the date is the clock's ``VirtualClock/startDate`` plus the virtual time
  /// that has passed, so it moves only when the test advances the clock; otherwise it is the
  /// wall clock. `randomValue` and `pickRandom` draw from a generator seeded with `seed` and
  /// the number of the answer, so a replayed test gets the same values.
  ///
  /// `{{ }}` escapes HTML (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#x27;`, `&#x60;`, `&#x3D;`) as
  /// WireMock does; `{{{ }}}` does not. A template that does not parse makes a response that
  /// fails the test when it is used, naming the line and column; so does one that runs away
  /// (more output than 32 MiB, or millions of steps). A body given as data (``data(_:status:headers:)``)
  /// is not templated; error answers are returned as they are. A proxied answer
  /// (``proxy(to:through:addingHeaders:removingHeaders:)``) whose base URL holds `{{` (as
  /// WireMock's `proxyBaseUrl` may) has the base URL rendered for each request.
  public func templated(seed: UInt64 = 0) -> StubResponse {
    if case .proxy(let proxy) = content {
      return replacingContent(.proxy(proxy.templated(seed: seed)))
    }
    guard case .http(let form, _, let headers) = content else { return self }
    var copy = self
    var body: String?
    var fileName: String?
    var source = ResponseTemplate.FileSource.folder(nil)
    switch form {
    case .text(let text): body = text
    case .json(let data): body = String(decoding: data, as: UTF8.self)
    case .file(let name, let bundle):
      fileName = name
      source = .bundle(bundle)
    case .stored, .empty, .data: break
    }
    copy.template = ResponseTemplate(
      body: body, headers: headers, fileName: fileName, source: source, seed: seed)
    return copy
  }

  /// This answer templated from the parts of a WireMock mapping: `fileName` (a
  /// `bodyFileName` holding `{{`) is read from `folder` for each request; `parameters` (the
  /// mapping's `transformerParameters`) are what templates read as `parameters`.
  func templated(fileName: String?, folder: URL?, parameters: JSONValue?, seed: UInt64 = 0)
    -> StubResponse
  {
    guard case .http(let form, _, let headers) = content else { return self }
    var copy = self
    var body: String?
    switch form {
    case .text(let text): body = text
    case .json(let data): body = String(decoding: data, as: UTF8.self)
    default: break
    }
    copy.template = ResponseTemplate(
      body: fileName == nil ? body : nil, headers: headers, fileName: fileName,
      source: .folder(folder), seed: seed, parameters: parameters)
    return copy
  }

  /// Whether the answer is rendered from templates for each request.
  public var isTemplated: Bool { template != nil }
}
