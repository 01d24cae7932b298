import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// WireMock's admin API (`/__admin`) over a served mock: the journal, the mappings added
/// through it, scenarios, waiting for requests, shutting down.
///
/// Each endpoint reads or changes the mock through its own API (its journal, its stubs, its
/// scenarios), so what the admin API shows is what `verify` sees. The API answers on the
/// connection's thread, except `POST /__admin/requests/wait`, which answers from a task of its
/// own once enough requests arrived or its time is up; the connection's thread waits for the
/// answer as for a delayed stub, and no other connection waits for it.
final class AdminAPI: Sendable {

  /// An answer: a status and a JSON body.
  struct Reply {
    var status: Int
    var body: Data

    init(_ status: Int, _ value: JSONValue) {
      self.status = status
      self.body = AdminJSON.data(value)
    }
  }

  private struct State {
    /// When each request the server handed the mock arrived, by task identifier; the oldest
    /// go once there are twice as many as the journal keeps.
    var logged: [Int: Date] = [:]
    var loggedOrder: [Int] = []
    /// Stops the server (`POST /__admin/shutdown` without a hook of its own).
    var stop: (@Sendable () -> Void)?
  }

  let mock: URLSessionMock
  let settings: AdminSettings
  /// The mappings added through the API or started with.
  let mappings: AdminMappings
  /// How many requests the mock's journal keeps (`ServerLimits.maxJournalExchanges`).
  private let journalLimit: Int
  private let state = Locked(State())

  init(mock: URLSessionMock, settings: AdminSettings, journalLimit: Int) {
    self.mock = mock
    self.settings = settings
    self.journalLimit = max(journalLimit, 0)
    self.mappings = AdminMappings(
      mock: mock, templatesEveryResponse: settings.templatesEveryResponse)
    mappings.start(with: settings.mappings)
  }

  /// Sets how `POST /__admin/shutdown` stops the server, once the server exists.
  func stopsServer(with stop: @escaping @Sendable () -> Void) {
    state.withLock { $0.stop = stop }
  }

  /// Notes that the request of task `taskIdentifier` arrived at `date`.
  func logged(_ taskIdentifier: Int, at date: Date) {
    state.withLock { state in
      state.logged[taskIdentifier] = date
      state.loggedOrder.append(taskIdentifier)
      let keep = max(journalLimit, 1)
      if state.loggedOrder.count > 2 * keep {
        let drop = state.loggedOrder.count - keep
        for id in state.loggedOrder[..<drop] { state.logged[id] = nil }
        state.loggedOrder.removeFirst(drop)
      }
    }
  }

  private func loggedDates() -> [Int: Date] { state.withLock { $0.logged } }

  // MARK: - Answering

  /// Answers an admin request into `sink`; returns what cancels it (only a wait can be).
  func answer(_ request: URLRequest, to sink: some ResponseSink) -> @Sendable () -> Void {
    let call = AdminCall(request)
    if call.method == "POST", call.segments == ["requests", "wait"] {
      switch startWait(call) {
      case .answer(let reply):
        deliver(reply, for: request, to: sink)
        return {}
      case .wait(let wait):
        let answer: @Sendable () async -> Void = { [self] in
          guard let reply = await waitReply(wait) else { return }
          deliver(reply, for: request, to: sink)
        }
        // On a thread of its own where there are task executors, so that the answer never
        // waits for the cooperative pool (which the test that made the server may block).
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
          let thread = RelayThread()
          let task = Task(executorPreference: thread) {
            await answer()
            thread.end()
          }
          return { task.cancel() }
        }
        let task = Task { await answer() }
        return { task.cancel() }
      }
    }
    deliver(reply(to: call), for: request, to: sink)
    if call.method == "POST", call.segments == ["shutdown"] { shutDown() }
    return {}
  }

  private func deliver(_ reply: Reply, for request: URLRequest, to sink: some ResponseSink) {
    guard let url = request.url,
      let response = HTTPURLResponse(
        url: url, statusCode: reply.status, httpVersion: "HTTP/1.1",
        headerFields: ["Content-Type": "application/json"])
    else { return sink.finish(.failed(URLError(.badURL))) }
    sink.receiveWhole(response, reply.body, .complete)
  }

  /// Stops the server on a thread of its own, once the answer is on its way: the connection
  /// that asked writes it before it sees the stop.
  private func shutDown() {
    let stop = settings.onShutdown ?? state.withLock { $0.stop }
    guard let stop else { return }
    Thread.detachNewThread { stop() }
  }

  /// The answer to every endpoint but the wait.
  func reply(to call: AdminCall) -> Reply {
    switch (call.method, call.segments) {
    case ("GET", []):
      return Reply(200, .object(["status": .string("ready")]))
    case ("POST", ["shutdown"]):
      return Reply(200, AdminJSON.empty)
    case ("POST", ["reset"]):
      resetAll()
      return Reply(200, AdminJSON.empty)
    case ("GET", ["requests"]):
      return listRequests(call)
    case ("DELETE", ["requests"]), ("POST", ["requests", "reset"]):
      mock.resetJournal()
      return Reply(200, AdminJSON.empty)
    case ("POST", ["requests", "count"]):
      return withPattern(call) { matcher in
        Reply(
          200,
          .object([
            "count": .integer(Int64(mock.requests(matching: matcher).count)),
            "requestJournalDisabled": .bool(settings.requestJournalDisabled),
          ]))
      }
    case ("POST", ["requests", "find"]):
      return withPattern(call) { matcher in
        Reply(200, .object(["requests": loggedRequests(mock.requests(matching: matcher))]))
      }
    case ("GET", ["requests", "unmatched"]):
      // Newest first, as WireMock 2.35.1 lists them (`find` lists oldest first).
      let logged = loggedRequests(mock.unmatchedRequests)
      guard case .array(let requests) = logged else {
        return Reply(200, .object(["requests": logged]))
      }
      return Reply(200, .object(["requests": .array(requests.reversed())]))
    case ("GET", ["requests", "unmatched", "near-misses"]):
      return nearMisses()
    case ("POST", ["near-misses", "request"]):
      return nearMissesOfRequest(call)
    case ("POST", ["near-misses", "request-pattern"]):
      return withPattern(call) { matcher in nearMisses(of: matcher, pattern: call.body) }
    case ("GET", let path) where path.count == 2 && path[0] == "requests":
      return oneRequest(path[1])
    case ("DELETE", let path) where path.count == 2 && path[0] == "requests":
      return Reply(
        404, AdminJSON.errors(code: 404, title: "Removing one request is not supported."))
    default:
      return mappingReply(to: call)
        ?? Reply(
          404,
          AdminJSON.errors(
            code: 404, title: "No admin endpoint \(call.method) /__admin/\(call.path)."))
    }
  }

  /// `POST /__admin/reset`: the journal empty, every scenario back to its start, and the
  /// mappings back to those the server started with, as WireMock does.
  private func resetAll() {
    mock.resetJournal()
    resetMappings()
    resetScenarios()
  }

  // MARK: - Requests

  private func listRequests(_ call: AdminCall) -> Reply {
    let dates = loggedDates()
    var exchanges = Array(mock.exchanges.reversed())
    if let text = call.query["since"] {
      guard let since = AdminJSON.date(text) else {
        return Reply(
          400,
          AdminJSON.errors(
            code: 10, title: "Invalid since",
            detail: "since must be an ISO 8601 date and time, got \"\(text)\"."))
      }
      exchanges = exchanges.filter { (dates[$0.taskIdentifier] ?? .distantPast) > since }
    }
    let total = exchanges.count
    if let text = call.query["limit"] {
      guard let limit = Int(text), limit >= 0 else {
        return Reply(
          400,
          AdminJSON.errors(
            code: 10, title: "Invalid limit",
            detail: "limit must be a number, 0 or more, got \"\(text)\"."))
      }
      exchanges = Array(exchanges.prefix(limit))
    }
    return Reply(
      200,
      .object([
        "requests": .array(
          exchanges.map { AdminJSON.servedEvent($0, loggedAt: dates[$0.taskIdentifier]) }),
        "meta": .object(["total": .integer(Int64(total))]),
        "requestJournalDisabled": .bool(settings.requestJournalDisabled),
      ]))
  }

  private func oneRequest(_ id: String) -> Reply {
    let dates = loggedDates()
    guard let task = AdminJSON.taskIdentifier(ofRequestID: id),
      let exchange = mock.exchanges.last(where: { $0.taskIdentifier == task })
    else {
      return Reply(404, AdminJSON.errors(code: 404, title: "No request with id \(id)."))
    }
    return Reply(200, AdminJSON.servedEvent(exchange, loggedAt: dates[task]))
  }

  /// The requests as WireMock logs them, each with its `loggedDate` when the journal still
  /// holds the exchange it belongs to. `requests` come from the journal, in its order, so
  /// each is paired with the next exchange of the same request.
  private func loggedRequests(_ requests: [URLRequest]) -> JSONValue {
    .array(loggedRequestList(requests))
  }

  private func loggedRequestList(_ requests: [URLRequest]) -> [JSONValue] {
    let dates = loggedDates()
    let exchanges = mock.exchanges
    var next = exchanges.startIndex
    return requests.map { request in
      var index = next
      while index < exchanges.endIndex, exchanges[index].request != request { index += 1 }
      guard index < exchanges.endIndex else {
        return AdminJSON.loggedRequest(request, loggedAt: nil)
      }
      next = index + 1
      return AdminJSON.loggedRequest(
        request, loggedAt: dates[exchanges[index].taskIdentifier])
    }
  }

  /// `POST /__admin/near-misses/request-pattern`: the three requests of the journal closest to
  /// the pattern the body describes, closest first (the oldest first among equals), each with
  /// `request`, `requestPattern` (the body) and `matchResult` with its `distance` and, beyond
  /// WireMock, the `report` of what differed.
  private func nearMisses(of matcher: RequestMatcher, pattern: Data) -> Reply {
    let requests = mock.requests
    let ranked = requests.enumerated().map { index, request in
      (index, matcher.nearMissDistance(to: request))
    }.sorted { ($0.1.distance, $0.0) < ($1.1.distance, $1.0) }.prefix(3)
    let logged = loggedRequestList(requests)
    let described = (try? JSONValue(wireMockAdminBody: pattern)) ?? .object([:])
    let misses: [JSONValue] = ranked.map { index, miss in
      .object([
        "request": logged[index],
        "requestPattern": described,
        "matchResult": .object([
          "distance": .double(miss.distance), "report": .string(miss.report),
        ]),
      ])
    }
    return Reply(200, .object(["nearMisses": .array(misses)]))
  }

  /// `GET /__admin/requests/unmatched/near-misses`: for each unmatched request, its closest
  /// stubs (see ``nearMisses(for:logged:)``), in WireMock's shape.
  private func nearMisses() -> Reply {
    let misses = mock.unmatchedRequests.flatMap { request in
      nearMisses(for: request, logged: AdminJSON.loggedRequest(request, loggedAt: nil))
    }
    return Reply(200, .object(["nearMisses": .array(misses)]))
  }

  /// `POST /__admin/near-misses/request`: the closest stubs to the request the body describes
  /// (WireMock's logged-request JSON: `url`, `method`, `headers`, `body` or `bodyAsBase64`),
  /// as if it had been sent to this server.
  private func nearMissesOfRequest(_ call: AdminCall) -> Reply {
    let described: WireMockLoggedRequest
    do {
      described = try WireMockLoggedRequest(json: call.body, source: call.source)
    } catch {
      return Self.invalid(error)
    }
    guard let absolute = URL(string: call.origin + described.url) else {
      return Reply(
        422,
        AdminJSON.errors(
          code: 10, title: "Invalid request",
          detail: "The url \"\(described.url)\" is not a path and query.", pointer: "/url"))
    }
    var request = URLRequest(url: absolute)
    request.httpMethod = described.method
    var headers: [String: JSONValue] = [:]
    for (name, values) in described.headers {
      request.setValue(values.joined(separator: ","), forHTTPHeaderField: name)
      headers[name] = values.count == 1 ? .string(values[0]) : .array(values.map { .string($0) })
    }
    request.httpBody = described.body
    var logged: [String: JSONValue] = [
      "url": .string(described.url), "method": .string(described.method),
    ]
    if !headers.isEmpty { logged["headers"] = .object(headers) }
    return Reply(
      200, .object(["nearMisses": .array(nearMisses(for: request, logged: .object(logged)))]))
  }

  /// The three stubs closest to `request`, closest first, as WireMock lists near misses:
  /// `request` (`logged`), `stubMapping` (the mapping the stub came from; absent for a stub
  /// made in code), and `matchResult` with a `distance` in `0...1` (0: it matches) and,
  /// beyond WireMock, the mock's `report` of what differed.
  private func nearMisses(for request: URLRequest, logged: JSONValue) -> [JSONValue] {
    mock.nearMissDistances(for: request, limit: 3).map { miss in
      var object: [String: JSONValue] = [
        "request": logged,
        "matchResult": .object([
          "distance": .double(miss.distance), "report": .string(miss.report),
        ]),
      ]
      if let mapping = mappings.mapping(ofStub: miss.stub),
        let json = try? mapping.jsonValue()
      {
        object["stubMapping"] = json
      }
      return .object(object)
    }
  }

  /// Reads the body as a request pattern and answers with `body`, or 422 naming what is wrong.
  func withPattern(_ call: AdminCall, _ body: (RequestMatcher) -> Reply) -> Reply {
    do {
      return body(try RequestMatcher.wireMockPattern(json: call.body, source: call.source))
    } catch {
      return Self.invalid(error)
    }
  }

  /// 422 with the error's text, as WireMock answers a body it cannot read, naming the value at
  /// fault as a JSON pointer (a bundle error's path `mappings[0].request.urll` is
  /// `/mappings/0/request/urll`; `/` for the whole body; none for text that is not JSON), as
  /// WireMock names it.
  static func invalid(_ error: any Error) -> Reply {
    let pointer = (error as? MockBundleError).map(\.jsonPointer) ?? "/"
    return Reply(
      422,
      AdminJSON.errors(
        code: 10, title: "Error parsing JSON", detail: String(describing: error),
        pointer: pointer))
  }

  // MARK: - Waiting

  /// What a wait's body leads to: an answer at once, or a wait.
  enum WaitStart {
    case answer(Reply)
    case wait(Wait)
  }

  /// A wait the body asked for: what to count, how many, until when.
  struct Wait {
    let matcher: RequestMatcher
    let count: Int
    let milliseconds: Int
    let deadline: ContinuousClock.Instant
  }

  /// `POST /__admin/requests/wait` with `{"pattern": {...}, "count": N, "timeoutMs": T}`:
  /// 200 with the matching requests once `N` (default 1) are in the journal, 408 when `T`
  /// milliseconds (default 10 000) of real time pass first. Decided here, on the connection's
  /// thread, when the body is wrong or the journal already tells (so that no task is needed);
  /// otherwise the wait is returned, for ``waitReply(_:)``.
  func startWait(_ call: AdminCall) -> WaitStart {
    let body: WireMockWait
    do {
      body = try WireMockWait(json: call.body, source: call.source)
    } catch {
      return .answer(Self.invalid(error))
    }
    let wait = Wait(
      matcher: body.pattern, count: body.count, milliseconds: body.timeoutMilliseconds,
      deadline: ContinuousClock.now + .milliseconds(body.timeoutMilliseconds))
    let found = mock.requests(matching: wait.matcher)
    if found.count >= wait.count { return .answer(arrived(found)) }
    if wait.milliseconds == 0 { return .answer(timedOut(wait, found: found.count)) }
    return .wait(wait)
  }

  /// Waits, woken by each request the mock settles (the count `waitForRequests` waits on),
  /// never by polling, until the wait is met or its time is up; `nil` when cancelled (the
  /// client went away, and nobody reads the answer).
  func waitReply(_ wait: Wait) async -> Reply? {
    while true {
      // Read before the journal: a request that settles after this read wakes the wait below.
      let settled = mock.settledRequestCount
      let found = mock.requests(matching: wait.matcher)
      if found.count >= wait.count { return arrived(found) }
      let left = wait.deadline - ContinuousClock.now
      guard left > .zero else { return timedOut(wait, found: found.count) }
      do {
        try await mock.waitUntilSettled(count: settled + 1, timeout: left)
      } catch is WaitTimeoutError {
        return timedOut(wait, found: mock.requests(matching: wait.matcher).count)
      } catch {
        return nil
      }
    }
  }

  private func arrived(_ found: [URLRequest]) -> Reply {
    Reply(
      200, .object(["count": .integer(Int64(found.count)), "requests": loggedRequests(found)]))
  }

  private func timedOut(_ wait: Wait, found: Int) -> Reply {
    Reply(
      408,
      AdminJSON.errors(
        code: 408,
        title:
          "Expected \(wait.count) request(s) matching \(wait.matcher), but \(found) arrived "
          + "within \(wait.milliseconds) ms."))
  }
}

/// One admin request, read: its method, its path below `/__admin` in segments, its query and
/// body.
struct AdminCall {
  let method: String
  /// The path below `/__admin`, without slashes at either end: `requests/count`.
  let path: String
  let segments: [String]
  let query: [String: String]
  let body: Data
  /// The server's own `http://HOST:PORT`, which the request was sent to.
  let origin: String

  init(_ request: URLRequest) {
    method = request.httpMethod ?? "GET"
    let parts = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false) }
    var origin = "\(parts?.scheme ?? "http")://\(parts?.host ?? "127.0.0.1")"
    if let port = parts?.port { origin += ":\(port)" }
    self.origin = origin
    // Each segment decoded on its own, so that `%2F` is a character of a segment (a scenario
    // named `a/b`) and never splits one; a segment that does not decode is kept as sent, and
    // names nothing.
    let full = parts?.percentEncodedPath ?? "/__admin"
    let below = full.dropFirst("/__admin".count)
    segments = below.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
    path = segments.joined(separator: "/")
    var query: [String: String] = [:]
    for item in parts?.queryItems ?? [] where query[item.name] == nil {
      query[item.name] = item.value ?? ""
    }
    self.query = query
    body = request.httpBody ?? Data()
  }

  /// How errors name this request's body: `POST /__admin/requests/count`.
  var source: String { "\(method) /__admin/\(path)" }
}
