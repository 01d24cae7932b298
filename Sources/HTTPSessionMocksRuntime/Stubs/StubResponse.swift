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
  /// How an HTTP answer's body was given: kept, so that a stub can be written back out in the
  /// form it was written in.
  enum Body: @unchecked Sendable {
    // @unchecked Sendable: `Bundle` is only read (for a resource's URL).
    case empty
    case data(Data)
    case text(String)
    case json(Data)
    /// A fixture file, read when first used, so that a missing file fails where it is used.
    case file(name: String, bundle: Bundle)
    /// A body read from a file of a bundle folder (`path`, relative to the folder), kept with
    /// its name so that writing the bundle puts it back in the same file.
    case stored(path: String, data: Data)
  }

  enum Content: @unchecked Sendable {
    // @unchecked Sendable: `URLResponse` and the errors are immutable once a stub holds them.
    case http(Body, status: Int, headers: [String: String])
    case raw(data: Data?, response: URLResponse?, error: (any Error)?)
    case error(any Error)
    case invalid(String)
    /// A WebSocket script: the upgrade's acceptance, then the steps (see
    /// `webSocket(subprotocol:_:)`).
    case webSocket(subprotocol: String?, steps: [WebSocketStep])
    /// Fetched from another server: see ``StubResponse/proxy(to:through:addingHeaders:removingHeaders:)``.
    case proxy(Proxy)
  }

  /// The content and its caches, in one object so that copying a response (as routing does
  /// for every request) is one retain.
  private(set) var storage: Storage
  /// How long after `resume()` the answer arrives, on the mock's clock.
  public private(set) var delay: Duration?
  /// How the body is spread over time, if it is: see ``dribbled(inChunks:over:)``.
  private(set) var dribble: Dribble?
  /// A random delay drawn for each answer, on top of ``delay``: see
  /// ``delayed(by:)-(DelayDistribution)``.
  public private(set) var delayDistribution: DelayDistribution?
  /// The body, header values and body file name as Handlebars templates, rendered for each
  /// request: see ``templated(seed:)``.
  var template: ResponseTemplate?

  /// Whether the body is spread over time (``dribble`` is set).
  ///
  /// A pattern match rather than `dribble == nil`, which compared the optional through
  /// `Dribble`'s value witnesses: about 50 instructions on every request (`mock` benchmark).
  var isDribbled: Bool {
    if case .some = dribble { return true }
    return false
  }

  /// Whether the answer is due at once: no delay, fixed or random.
  var isImmediate: Bool {
    delayDistribution == nil && (delay.map { $0 <= .zero } ?? true)
  }

  /// The delay of the stub's answer number `call`: the fixed one and the random one.
  func delay(forCall call: Int) -> Duration {
    (delay ?? .zero) + (delayDistribution?.delay(forCall: call) ?? .zero)
  }

  /// A body sent in `chunks` pieces spaced evenly over `duration` on the mock's clock.
  struct Dribble: Sendable, Equatable {
    var chunks: Int
    var duration: Duration
    /// The size of each piece, when the body is cut where its parts end (an event stream's
    /// events) rather than evenly; as many as `chunks`, adding up to the body's length.
    var pieceSizes: [Int]? = nil
    /// The time of each piece after the head, when the pieces come at times of their own (an
    /// event stream's steps) rather than evenly; as many as `pieceSizes`, never decreasing.
    var pieceTimes: [Duration]? = nil
    /// When the stream ends after the head, if later than its last piece (a stream that waits
    /// before it ends).
    var endTime: Duration? = nil
    /// Whether the connection drops at the end instead of the body ending: the client gets
    /// `URLError(.networkConnectionLost)` (the server cuts the body and closes).
    var dropsAtEnd = false
    /// The number of bytes after which the body is cut and the connection drops
    /// (``truncated(after:)``).
    var truncatedAfter: Int? = nil

    /// What of this dribble no file format holds (steps at their own times, a drop, a
    /// truncation), for a bundle writer's refusal; `nil` when it is an even or event dribble.
    var unstorablePart: String? {
      if truncatedAfter != nil { return "its truncated(after:) body" }
      if pieceTimes != nil || endTime != nil || dropsAtEnd {
        return "its event-stream steps (.events with waits, comments or a drop)"
      }
      return nil
    }

    /// What makes these values unusable, naming them; `nil` when they are fine.
    var problem: String? {
      if let truncatedAfter, truncatedAfter < 0 {
        return "truncated(after: \(truncatedAfter)) needs a byte count that is not negative; "
          + "give 0 or more."
      }
      if chunks < 1 {
        return "dribbled(inChunks: \(chunks), over: \(duration)) needs at least 1 chunk; "
          + "give a positive number of chunks."
      }
      if duration < .zero {
        return "dribbled(inChunks: \(chunks), over: \(duration)) needs a duration that is not "
          + "negative; give .zero or more."
      }
      return nil
    }
  }

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

  /// Whether the mock follows this answer as a redirect: a 301, 302, 303, 307 or 308 with a
  /// `Location`, in any form but the one given as is (``init(data:response:error:)``), which is
  /// delivered exactly as given. Worked out once, when the response is made.
  var isRedirect: Bool { storage.isRedirect }

  /// The answer as given, in DHURLSessionStub's form.
  ///
  /// With no error and no response, the answer gets status 200 for the request's URL. With an
  /// error, the response is `nil` unless one is given.
  public init(data: Data?, response: URLResponse?, error: (any Error)?) {
    self.init(.raw(data: data, response: response, error: error))
  }

  /// An empty body with status `code`.
  public static func status(_ code: Int, headers: [String: String] = [:]) -> StubResponse {
    StubResponse(.http(.empty, status: code, headers: headers))
  }

  /// `data` as the body.
  public static func data(_ data: Data, status: Int = 200, headers: [String: String] = [:])
    -> StubResponse
  {
    StubResponse(.http(.data(data), status: status, headers: headers))
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
      return StubResponse(.http(.json(body), status: status, headers: jsonHeaders(headers)))
    } catch {
      return StubResponse(
        .invalid("The value for .json(...) cannot be encoded as JSON: \(sentence(error))"))
    }
  }

  /// A `JSONSerialization` object (dictionaries, arrays, strings, numbers, `NSNull`) as the
  /// body, with `Content-Type: application/json` and the keys sorted.
  ///
  /// The untyped form of ``json(_:status:headers:)-(EncodableSendable,_,_)``, for bodies with
  /// no `Encodable` type at hand. A value of an `Encodable` type goes to that form; a dictionary
  /// literal that mixes value types comes here:
  ///
  /// ```swift
  /// mock.stub(.get("/meta"), with: .json(["verifiable": true, "hooks": ["192.30.252.0/22"]]))
  /// ```
  ///
  /// An object that JSON cannot represent makes a response that fails the test when it is used.
  public static func json(
    _ object: Any, status: Int = 200, headers: [String: String] = [:]
  ) -> StubResponse {
    // Wrapping in an array lets strings, numbers and null through as top-level fragments.
    guard JSONSerialization.isValidJSONObject([object]),
      let body = try? JSONSerialization.data(
        withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
    else {
      return StubResponse(
        .invalid(
          "The object for .json(...) cannot be represented as JSON: \(type(of: object)) "
            + "\(String(describing: object).prefix(200))."))
    }
    return StubResponse(.http(.json(body), status: status, headers: jsonHeaders(headers)))
  }

  /// A `JSONSerialization` object as the body: the old name of the untyped
  /// ``json(_:status:headers:)-(Any,_,_)``.
  @available(*, deprecated, renamed: "json(_:status:headers:)")
  public static func jsonObject(
    _ object: Any, status: Int = 200, headers: [String: String] = [:]
  ) -> StubResponse {
    json(object, status: status, headers: headers)
  }

  /// `text` encoded as UTF-8, with `Content-Type: text/plain; charset=utf-8`.
  public static func text(_ text: String, status: Int = 200, headers: [String: String] = [:])
    -> StubResponse
  {
    StubResponse(
      .http(
        .text(text), status: status,
        headers: withDefault(headers, contentType: "text/plain; charset=utf-8")))
  }

  /// The contents of the fixture file `name` (with its extension) in `bundle`, read when a
  /// request first uses the stub.
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
    let isJSON = (name as NSString).pathExtension.lowercased() == "json"
    return StubResponse(
      .http(
        .file(name: name, bundle: bundle), status: status,
        headers: isJSON ? jsonHeaders(headers) : headers))
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

  /// This answer, arriving after a random delay drawn from `distribution` for each request,
  /// on the mock's clock (WireMock's `delayDistribution`).
  ///
  /// ```swift
  /// mock.stub(.get("/search"), with: .json(results).delayed(by: .logNormal(
  ///   median: .milliseconds(80), sigma: 0.4, seed: 7)))
  /// ```
  ///
  /// The delays repeat from run to run: see ``DelayDistribution``. A fixed
  /// ``delayed(by:)-(Duration)`` delay adds to it.
  public func delayed(by distribution: DelayDistribution) -> StubResponse {
    var copy = self
    copy.delayDistribution = distribution
    return copy
  }

  /// This answer with its body sent in `chunks` pieces spaced evenly over `duration`, on the
  /// mock's clock (WireMock's chunked dribble delay).
  ///
  /// The response head arrives at the answer's time (after any ``delayed(by:)-(Duration)``), then piece
  /// `i` of the body at `duration · i / chunks` after it, so the body is complete when
  /// `duration` is over. What the code under test sees depends on the door it came through:
  ///
  /// - **Injected** (the mock as an `HTTPSession`): completion handlers, `data(for:)` and
  ///   downloads get the whole body at the end of the duration, as a real session's would.
  /// - **URLProtocol bridge** (a real `URLSession` from the mock): on Apple platforms a
  ///   delegate's `urlSession(_:dataTask:didReceive:)` sees each piece as the test advances the
  ///   clock; on Linux the body arrives in one piece at the end of the duration (corelibs keeps
  ///   only the last piece for completion-handler tasks). A completion handler always gets the
  ///   whole body.
  /// - **Loopback server**: the body is written with `Transfer-Encoding: chunked`, each piece
  ///   when the clock reaches it (to an HTTP/1.0 client, unframed, and the connection closes).
  ///
  /// ```swift
  /// let clock = VirtualClock()
  /// let mock = URLSessionMock(clock: clock)
  /// mock.stub(.get("/video"), with: .data(movie).dribbled(inChunks: 10, over: .seconds(5)))
  /// // ... start the download, then:
  /// await clock.advance(by: .seconds(1))  // two pieces have arrived
  /// ```
  ///
  /// The request's `timeoutInterval` is an idle timer, as in URLSession: each piece starts it
  /// again, so the stream fails with `URLError(.timedOut)` only where a gap between pieces (or
  /// the wait for the head) is longer; ``URLSessionMock/resourceTimeout`` bounds the whole. Cancelling the task
  /// stops the pieces. An empty body (a `HEAD` request, a 204) has nothing to dribble and
  /// arrives whole after the delay; a body shorter than `chunks` bytes goes one byte a piece.
  /// An error answer is not dribbled.
  ///
  /// > Important: `chunks` must be at least 1 and `duration` not negative; a response with
  /// > other values fails the test when it is used, naming them, and the request fails with
  /// > `URLError(.resourceUnavailable)`.
  public func dribbled(inChunks chunks: Int, over duration: Duration) -> StubResponse {
    var copy = self
    copy.dribble = Dribble(chunks: chunks, duration: duration)
    return copy
  }

  /// This answer with its body sent in pieces of `sizes` bytes spaced evenly over `duration`
  /// on the mock's clock (``events(_:every:status:headers:)``): piece `i` (from 1) of `n` at
  /// `duration · i / n`.
  /// The answer with its body cut after `byteCount` bytes, after which the connection drops:
  /// the stream a client meets when a server or a network goes away mid-answer, the usual
  /// reason to resume a download or reconnect an event stream.
  ///
  /// The head arrives as usual (with the whole body's `Content-Length`, as a server that died
  /// mid-body sent it), then the first `byteCount` bytes, then the end fails: the injected
  /// mock and the URLProtocol bridge fail the request with `URLError(.networkConnectionLost)`,
  /// and the loopback server closes the connection in the middle of its chunked body. A
  /// dribbled body (``dribbled(inChunks:over:)``, ``events(_:every:status:headers:)``) is cut
  /// where its pieces reach the count, and drops at the time of its last piece kept.
  ///
  /// ```swift
  /// mock.stub(.get("/video"), with: .data(movie).truncated(after: 1024))
  /// // the client gets 1,024 bytes, then URLError(.networkConnectionLost)
  /// ```
  ///
  /// A count at or past the body's end delivers the whole body, then drops the connection
  /// before the body ends. The exchange records the pieces delivered and the error.
  ///
  /// > Important: `byteCount` must not be negative; a response with a negative count fails
  /// > the test when it is used, naming it, and the request fails with
  /// > `URLError(.resourceUnavailable)`.
  public func truncated(after byteCount: Int) -> StubResponse {
    var copy = self
    var dribble = copy.dribble ?? Dribble(chunks: 1, duration: .zero)
    dribble.truncatedAfter = byteCount
    copy.dribble = dribble
    return copy
  }

  /// The answer with its body sent as the given pieces, each at its own time after the head,
  /// the stream ending at `end` (or dropping, with `drops`): what an event stream's steps
  /// make.
  func streamed(
    inPiecesOf sizes: [Int], at times: [Duration], endingAt end: Duration, drops: Bool
  ) -> StubResponse {
    var copy = self
    copy.dribble = Dribble(
      chunks: max(sizes.count, 1), duration: end, pieceSizes: sizes, pieceTimes: times,
      endTime: end, dropsAtEnd: drops)
    return copy
  }

  func dribbled(inPiecesOf sizes: [Int], over duration: Duration) -> StubResponse {
    var copy = self
    copy.dribble = Dribble(chunks: sizes.count, duration: duration, pieceSizes: sizes)
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

  /// The answer for `request`, or the problem that makes this response unusable.
  ///
  /// HTTP answers get `Content-Length` (unless the stub sets it) and, for a `HEAD`, no body;
  /// a status that carries no body (1xx, 204, 304) gets neither, as on the wire.
  ///
  /// A templated response is rendered for each request, reading `now` (the mock's clock as a
  /// date; the wall clock when not given). `sent` is what routing read of the request's URL,
  /// when it did.
  func resolve(for request: URLRequest, sent: RequestFacts? = nil, now: Date? = nil) -> Resolved {
    if let problem = dribble?.problem { return .invalid(problem) }
    if let fixed = storage.fixedAnswer { return .answer(fixed) }
    let url = sent?.url ?? request.url ?? URL(fileURLWithPath: "/")
    let isHead = request.isHead
    if let template, case .http(let form, let status, let headers) = content {
      return resolveTemplated(
        template, form: form, status: status, headers: headers, for: request, sent: sent,
        url: url, isHead: isHead, now: now ?? Date())
    }
    // Answers are immutable: the one made last is reused while requests keep coming for the
    // same URL, as they do in a test.
    if let cached = storage.lastAnswer.withLock({ $0 }), cached.url == url,
      cached.isHead == isHead
    {
      return .answer(cached.answer)
    }
    let answer: Answer
    switch content {
    case .http(let form, let status, let headers):
      let body: Data
      switch storage.bytes(of: form) {
      case .success(let bytes): body = bytes
      case .failure(let problem): return .invalid(problem.message)
      }
      let carriesBody = Self.statusCarriesBody(status)
      let response = makeResponse(
        for: url, status: status, headers: headers, length: carriesBody ? body.count : nil)
      answer = Answer(data: isHead || !carriesBody ? Data() : body, response: response, error: nil)
    case .raw(let data, let response, let error):
      answer = Answer(
        data: data,
        response: error != nil
          ? response
          : response ?? makeResponse(for: url, status: 200, headers: [:], length: data?.count),
        error: error)
    case .error(let error):
      answer = Answer(error: error)
    case .invalid(let problem):
      return .invalid(problem)
    case .webSocket:
      // The core makes the upgrade's answer, which depends on the kind of task.
      return .webSocket
    case .proxy:
      return .invalid("A proxied response (.proxy(to:)) answers only as a stub's response.")
    }
    storage.lastAnswer.withLock { $0 = (url, isHead, answer) }
    return .answer(answer)
  }

  /// The answer of a templated response: the parts rendered for `request`.
  private func resolveTemplated(
    _ template: ResponseTemplate, form: Body, status: Int, headers: [String: String],
    for request: URLRequest, sent: RequestFacts?, url: URL, isHead: Bool, now: Date
  ) -> Resolved {
    var stored: Data?
    if template.body == nil, template.fileName == nil {
      switch form {
      case .text, .json, .stored, .file:
        switch storage.bytes(of: form) {
        case .success(let bytes): stored = bytes
        case .failure(let problem): return .invalid(problem.message)
        }
      case .empty, .data:
        break
      }
    }
    let rendered: ResponseTemplate.Rendered
    switch template.render(for: request, sent: sent, headers: headers, body: stored, now: now) {
    case .success(let value): rendered = value
    case .failure(let error): return .invalid("The response template cannot be rendered: \(error)")
    }
    var status = status
    var body: Data
    var fields = rendered.headers
    if let missing = rendered.missingFile {
      // As WireMock: a templated body file that does not exist answers 500.
      status = 500
      body = Data("The body file \"\(missing)\" (a templated bodyFileName) does not exist.".utf8)
      fields = ["Content-Type": "text/plain; charset=utf-8"]
    } else if let renderedBody = rendered.body {
      body = renderedBody
    } else {
      switch storage.bytes(of: form) {
      case .success(let bytes): body = bytes
      case .failure(let problem): return .invalid(problem.message)
      }
    }
    let carriesBody = Self.statusCarriesBody(status)
    // The same headers (most often the stub's own dictionary), status and length as last
    // time: the same response, checked then.
    if let cached = template.lastResponse.withLock({ $0 }), cached.status == status,
      cached.length == body.count, cached.url == url,
      Self.sharesStorage(cached.base, fields) || cached.base == fields
    {
      let data = isHead || !carriesBody ? Data() : body
      // The same response and the same body (the template hands out the body it last
      // rendered while the bytes stay the same): the same answer, shared as an untemplated
      // stub's is.
      if let last = template.lastAnswer.withLock({ $0 }), last.response === cached.response,
        let lastData = last.data, Self.sharesStorage(lastData, data)
      {
        return .answer(last)
      }
      let answer = Answer(data: data, response: cached.response, error: nil)
      template.lastAnswer.withLock { $0 = answer }
      return .answer(answer)
    }
    let base = fields
    for (name, value) in fields {
      if let problem = HeaderFieldText.valueProblem(value, name: name) {
        return .invalid(
          "The response template made a header that would split the response: \(problem)")
      }
    }
    if carriesBody,
      !fields.keys.contains(where: { $0.utf8.count == 14 && $0.lowercased() == "content-length" })
    {
      fields["Content-Length"] = String(body.count)
    }
    let response: URLResponse?
    if let cached = template.lastResponse.withLock({ $0 }), cached.url == url,
      cached.status == status, cached.fields == fields
    {
      response = cached.response
    } else {
      response = makeResponse(for: url, status: status, headers: fields, length: nil)
    }
    template.lastResponse.withLock { $0 = (url, status, base, body.count, fields, response) }
    let answer = Answer(
      data: isHead || !carriesBody ? Data() : body, response: response, error: nil)
    template.lastAnswer.withLock { $0 = answer }
    return .answer(answer)
  }

  /// Whether `a` and `b`, copy-on-write values (a dictionary, a `Data`), are the same storage
  /// (and so equal), without comparing their contents: a copy shares its storage until one of
  /// them changes.
  private static func sharesStorage<Value>(_ a: Value, _ b: Value) -> Bool {
    withUnsafeBytes(of: a) { a in withUnsafeBytes(of: b) { b in a.elementsEqual(b) } }
  }

  /// The answer last built for `url` (and a `HEAD` request or not), if it is that one;
  /// builds nothing.
  func builtAnswer(for url: URL, isHead: Bool) -> Answer? {
    guard let cached = storage.lastAnswer.withLock({ $0 }), cached.url == url,
      cached.isHead == isHead
    else { return nil }
    return cached.answer
  }

  /// Whether a response with `status` carries a body (and so a `Content-Length`): not 1xx, 204
  /// or 304 (RFC 9110, 6.4.1). Every door answers by this rule.
  package static func statusCarriesBody(_ status: Int) -> Bool {
    !(100..<200).contains(status) && status != 204 && status != 304
  }

  enum Resolved {
    case answer(Answer)
    case invalid(String)
    /// A WebSocket script: the core answers the upgrade (or refuses a request that is not one).
    case webSocket
  }

  /// An HTTP response for `url`; `length`, when given, becomes `Content-Length` unless the
  /// headers have one.
  private func makeResponse(for url: URL, status: Int, headers: [String: String], length: Int?)
    -> HTTPURLResponse?
  {
    var fields = headers
    if let length,
      !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Length") == .orderedSame })
    {
      fields["Content-Length"] = String(length)
    }
    guard !storage.headerValues.isEmpty || storage.reasonPhrase != nil else {
      return HTTPURLResponse(
        url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
    }
    return StubHTTPURLResponse(
      url: url, statusCode: status, headerFields: fields, values: storage.headerValues,
      reasonPhrase: storage.reasonPhrase)
  }

  /// This answer with the header `name` sent once for each of `values`, in order, as a
  /// server sends several `Set-Cookie` headers.
  ///
  /// ```swift
  /// mock.stub(.post("/login"), with: .status(204).header("Set-Cookie", values: ["a=1", "b=2"]))
  /// ```
  ///
  /// The loopback server writes one header line a value. An `HTTPURLResponse` holds one value
  /// a name, so the injected door and the URLProtocol bridge give the values joined with `, `
  /// (as `URLSession` joins repeated headers); `HTTPCookie.cookies(withResponseHeaderFields:for:)`
  /// reads such a `Set-Cookie` back as the separate cookies. An error answer has no headers
  /// and is returned as it is.
  public func header(_ name: String, values: [String]) -> StubResponse {
    guard case .http(let body, let status, var headers) = content else { return self }
    for key in headers.keys where key.caseInsensitiveCompare(name) == .orderedSame {
      headers[key] = nil
    }
    var multiple = storage.headerValues.filter {
      $0.key.caseInsensitiveCompare(name) != .orderedSame
    }
    if !values.isEmpty {
      headers[name] = values.joined(separator: ", ")
      if values.count > 1 { multiple[name] = values }
    }
    var copy = self
    copy.storage = Storage(
      .http(body, status: status, headers: headers), headerValues: multiple,
      reasonPhrase: storage.reasonPhrase)
    return copy
  }

  /// This answer with `phrase` as the reason phrase of its status line, in place of the
  /// standard one: `HTTP/1.1 503 Down for maintenance` (WireMock's `statusMessage`).
  ///
  /// ```swift
  /// mock.stub(.get("/status"), with: .status(503).reasonPhrase("Down for maintenance"))
  /// ```
  ///
  /// Only the loopback server writes a status line. `HTTPURLResponse` has no reason phrase (its
  /// `localizedString(forStatusCode:)` is the standard text of the code), so through injection
  /// and the URLProtocol bridge the answer is the same without it. A phrase may hold visible
  /// characters, spaces and tabs; one with a line break or another control character would
  /// split the response, so the stub is invalid instead, and the test that uses it fails with
  /// the phrase named. An error answer has no status line and is returned as it is.
  public func reasonPhrase(_ phrase: String) -> StubResponse {
    guard case .http(let body, let status, let headers) = content else { return self }
    var copy = self
    if let problem = Self.reasonPhraseProblem(phrase) {
      copy.storage = Storage(.invalid(problem))
    } else {
      copy.storage = Storage(
        .http(body, status: status, headers: headers), headerValues: storage.headerValues,
        reasonPhrase: phrase)
    }
    return copy
  }

  /// This answer with `content` in place of its own, keeping its header values, reason
  /// phrase, delays and the rest.
  func replacingContent(_ content: Content) -> StubResponse {
    var copy = self
    copy.storage = Storage(
      content, headerValues: storage.headerValues, reasonPhrase: storage.reasonPhrase)
    return copy
  }

  /// Why `phrase` cannot be a reason phrase (RFC 9112: tabs, spaces, visible characters and
  /// bytes above ASCII), or `nil` when it can.
  static func reasonPhraseProblem(_ phrase: String) -> String? {
    guard
      let bad = phrase.unicodeScalars.first(where: {
        ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F
      })
    else { return nil }
    let code = String(bad.value, radix: 16, uppercase: true)
    return "The reason phrase \(phrase.debugDescription) holds the control character U+"
      + String(repeating: "0", count: max(0, 4 - code.count)) + code
      + ", which would split the status line; use visible characters, spaces and tabs."
  }
}

extension URLRequest {
  /// Whether the method is HEAD, in any case (checked on every answer, so without allocating).
  var isHead: Bool {
    guard let method = httpMethod, method.utf8.count == 4 else { return false }
    return method == "HEAD" || method.uppercased() == "HEAD"
  }
}

extension StubResponse {
  /// What a response holds, shared by its copies.
  final class Storage: Sendable {
    struct Problem: Error {
      let message: String
    }

    let content: Content
    let isRedirect: Bool
    /// The answer, when it is the same for every request (an error, or data with the response
    /// as given): built once, and read without looking at the request at all.
    let fixedAnswer: Answer?
    /// The last answer made, reused while requests keep coming for the same URL.
    let lastAnswer = Locked<(url: URL, isHead: Bool, answer: Answer)?>(nil)
    /// The bytes of a body built once: at creation for text and data, at first use for a file.
    private let builtBody: Locked<Result<Data, Problem>?>

    /// The headers sent once a value, by name, for those with several values (see
    /// `header(_:values:)`); `content` holds them joined.
    let headerValues: [String: [String]]
    /// The status line's reason phrase, when the stub sets one (see `reasonPhrase(_:)`).
    let reasonPhrase: String?

    init(
      _ content: Content, headerValues: [String: [String]] = [:], reasonPhrase: String? = nil
    ) {
      self.content = content
      self.headerValues = headerValues
      self.reasonPhrase = reasonPhrase
      if case .http(_, let status, let headers) = content,
        [301, 302, 303, 307, 308].contains(status)
      {
        isRedirect = headers.keys.contains {
          $0.caseInsensitiveCompare("Location") == .orderedSame
        }
      } else {
        isRedirect = false
      }
      switch content {
      case .raw(let data, let response?, let error):
        fixedAnswer = Answer(data: data, response: response, error: error)
      case .raw(let data, nil, let error?):
        fixedAnswer = Answer(data: data, response: nil, error: error)
      case .error(let error):
        fixedAnswer = Answer(error: error)
      default:
        fixedAnswer = nil
      }
      if case .http(let form, _, _) = content, case .file = form {
        builtBody = Locked(nil)
      } else if case .http(let form, _, _) = content {
        builtBody = Locked(Self.build(form))
      } else {
        builtBody = Locked(nil)
      }
    }

    func bytes(of form: Body) -> Result<Data, Problem> {
      if let built = builtBody.withLock({ $0 }) { return built }
      // A file is read outside the lock; two first requests at once may both read it.
      let built = Self.build(form)
      builtBody.withLock { $0 = built }
      return built
    }

    private static func build(_ form: Body) -> Result<Data, Problem> {
      switch form {
      case .empty: return .success(Data())
      case .data(let data), .json(let data), .stored(_, let data): return .success(data)
      case .text(let text): return .success(Data(text.utf8))
      case .file(let name, let bundle):
        let url =
          bundle.resourceURL?.appendingPathComponent(name)
          ?? bundle.bundleURL.appendingPathComponent(name)
        let candidates = [url, bundle.url(forResource: name, withExtension: nil)].compactMap { $0 }
        for candidate in candidates {
          if let body = try? Data(contentsOf: candidate) { return .success(body) }
        }
        return .failure(
          Problem(
            message: "The fixture file \"\(name)\" could not be read from \(url.path). Check the "
              + "name (with its extension) and that the file is a resource of the test target."))
      }
    }
  }
}
