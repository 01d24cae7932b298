import Foundation
import HTTPSessionKit
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One thing the benchmark measures, with how to set it up and what its figure means.
struct Scenario {
  enum Metric: Sendable {
    /// Nanoseconds per request, the median over repetitions.
    case nsPerRequest
    /// Wall-clock milliseconds for the whole workload.
    case wallMilliseconds
    /// Requests per second, all threads together.
    case requestsPerSecond
    /// Mebibytes of memory, as a child process reports them.
    case mebibytes
  }

  let name: String
  let metric: Metric
  /// Requests per measurement.
  let requests: Int
  /// Makes a fresh workload of `requests` requests, outside the timed region.
  let prepare: (_ requests: Int) throws -> Workload
  /// A figure measured otherwise than by timing a workload (a child process's memory), if
  /// this scenario has one; such a scenario has no warm-up and at most `maxSamples` samples.
  var direct: (() throws -> Double)?
  var maxSamples: Int?

  init(
    name: String, metric: Metric, requests: Int,
    prepare: @escaping (_ requests: Int) throws -> Workload
  ) {
    self.name = name
    self.metric = metric
    self.requests = requests
    self.prepare = prepare
  }

  /// A scenario whose figure `measure` returns directly, at most `samples` times a run.
  init(
    name: String, metric: Metric, requests: Int, samples: Int,
    measure: @escaping () throws -> Double
  ) {
    self.init(name: name, metric: metric, requests: requests) { _ in
      throw BenchmarkError(description: "\(name) is measured directly")
    }
    direct = measure
    maxSamples = samples
  }

  /// Prepares, times, checks and releases one workload; returns the figure for `metric`.
  func measure(requests count: Int? = nil) async throws -> Double {
    if let direct { return try direct() }
    let count = count ?? requests
    let workload = try prepare(count)
    let elapsed = try await workload.time()
    try workload.check()
    workload.tearDown()
    switch metric {
    case .nsPerRequest: return elapsed.nanoseconds / Double(count)
    case .wallMilliseconds: return elapsed.nanoseconds / 1e6
    case .requestsPerSecond: return Double(count) / (elapsed.nanoseconds / 1e9)
    case .mebibytes: return .nan
    }
  }
}

extension Scenario {
  /// Every scenario, in the order of the table.
  ///
  /// Per-request scenarios send 30,000 requests per measurement (5,000 with `quick`): the
  /// journal records every request, so a fresh mock per measurement keeps memory modest, and
  /// short measurements repeated more often give a median that a burst of load from other
  /// processes cannot move. The floor is cheap and records nothing, so it sends ten times as
  /// many for a steadier figure; the URLProtocol way is slow, so it sends fewer.
  static func all(quick: Bool) -> [Scenario] {
    let perRequest = quick ? 5_000 : 30_000
    let threaded = quick ? 16_000 : 40_000  // divisible by 8
    return [
      Scenario(name: "baseline", metric: .nsPerRequest, requests: perRequest * 10) { count in
        baseline(count)
      },
      Scenario(name: "mock", metric: .nsPerRequest, requests: perRequest) { count in
        oneAnswer(count)
      },
      Scenario(name: "mock-1000-exact", metric: .nsPerRequest, requests: perRequest) { count in
        thousandStubs(
          count, name: "mock-1000-exact", pattern: { "/items/\($0)" },
          path: "/items/\(middle)")
      },
      Scenario(name: "mock-1000-pattern", metric: .nsPerRequest, requests: perRequest) { count in
        thousandStubs(
          count, name: "mock-1000-pattern", pattern: { "/r\($0)/{id}" }, path: "/r\(middle)/42")
      },
      Scenario(name: "spy", metric: .nsPerRequest, requests: perRequest) { count in
        spy(count)
      },
      Scenario(name: "async", metric: .nsPerRequest, requests: perRequest) { count in
        asyncData(count)
      },
      Scenario(name: "urlprotocol", metric: .nsPerRequest, requests: quick ? 100 : 500) {
        count in
        try urlProtocol(count)
      },
      Scenario(name: "urlprotocol-bridge", metric: .nsPerRequest, requests: quick ? 100 : 500) {
        count in
        try urlProtocolBridge(count)
      },
      Scenario(
        name: "bridge-intercepted", metric: .nsPerRequest, requests: quick ? 100 : 500
      ) { count in
        try urlProtocolBridge(count, throughIntercept: true)
      },
      Scenario(name: "virtual-time", metric: .wallMilliseconds, requests: 1_000) { count in
        virtualTime(count)
      },
    ]
      + [1, 2, 4, 8].map { threads in
        Scenario(name: "threads-\(threads)", metric: .requestsPerSecond, requests: threaded) {
          count in
          try concurrent(count, threads: threads)
        }
      }
      + harScenarios(quick: quick)
      + streamScenarios(quick: quick)
      + templateScenarios(quick: quick)
  }

  /// The stub that answers in the 1,000-stub scenarios: the middle one.
  static let middle = 500

  // MARK: - Workloads

  /// (1) The floor: a stored handler called on `resume()`.
  static func baseline(_ count: Int) -> Workload {
    let session = BaselineSession(data: Fixture.body, response: Fixture.response)
    let sink = Sink()
    let handler = sink.handler
    let request = Fixture.request
    return Workload(
      sync: {
        for _ in 0..<count {
          session.dataTask(with: request, completionHandler: handler).resume()
        }
      },
      check: { try sink.check("baseline", expected: count) })
  }

  /// (2) `URLSessionMock(data:response:error:)`, completion-handler API, the same URL each time.
  static func oneAnswer(_ count: Int) -> Workload {
    let mock = URLSessionMock(data: Fixture.body, response: Fixture.response, error: nil)
    return completionHandlerLoop(mock, count, name: "mock")
  }

  /// (3) A mock with 1,000 stubs; the request matches the middle one. Every stub gives the
  /// same prebuilt answer as (2) (except that the others have a different body, so a wrong
  /// route is caught), so the difference from (2) is routing.
  static func thousandStubs(
    _ count: Int, name: String, pattern: (Int) -> String, path: String
  ) -> Workload {
    let mock = URLSessionMock()
    let right = StubResponse(data: Fixture.body, response: Fixture.response, error: nil)
    let wrong = StubResponse(data: Data("wrong".utf8), response: Fixture.response, error: nil)
    for index in 0..<1_000 {
      mock.stub(.get(pattern(index)), with: index == middle ? right : wrong)
    }
    let url = URL(string: "https://api.example.com" + path)!
    return completionHandlerLoop(mock, count, name: name, request: URLRequest(url: url))
  }

  /// (4) A forwarding `SpySession` around a mock like (2).
  static func spy(_ count: Int) -> Workload {
    let mock = URLSessionMock(data: Fixture.body, response: Fixture.response, error: nil)
    return completionHandlerLoop(SpySession(wrapping: mock), count, name: "spy")
  }

  /// (4) `try await mock.data(for:)` through a mock like (2).
  static func asyncData(_ count: Int) -> Workload {
    let mock = URLSessionMock(data: Fixture.body, response: Fixture.response, error: nil)
    let sink = Sink()
    let request = Fixture.request
    return Workload(
      async: {
        for _ in 0..<count {
          let (data, _) = try await mock.data(for: request)
          sink.calls += 1
          sink.bytes += data.count
        }
      },
      check: { try sink.check("async", expected: count) })
  }

  /// (5) The URLProtocol way: a real `URLSession` whose protocol class answers the canned body;
  /// each request waits for its completion before the next one starts. One untimed request
  /// first lets the session set itself up, which is not a per-request cost.
  static func urlProtocol(_ count: Int) throws -> Workload {
    let session = URLProtocolStub.makeSession()
    let sink = Sink()
    let record = sink.handler
    let answered = DispatchSemaphore(value: 0)
    let handler: Sink.Handler = { data, response, error in
      record(data, response, error)
      answered.signal()
    }
    let request = Fixture.request
    session.dataTask(with: request, completionHandler: handler).resume()
    answered.wait()
    try sink.check("urlprotocol", expected: 1)
    var workload = Workload(
      sync: {
        for _ in 0..<count {
          session.dataTask(with: request, completionHandler: handler).resume()
          answered.wait()
        }
      },
      check: { try sink.check("urlprotocol", expected: count + 1) })
    workload.tearDown = { session.invalidateAndCancel() }
    return workload
  }

  /// (6) `count` requests, each delayed 30 s on a `VirtualClock`, all answered by one
  /// `advance(by:)`. The timed part creates and resumes the tasks and advances the clock.
  static func virtualTime(_ count: Int) -> Workload {
    let clock = VirtualClock()
    let mock = URLSessionMock(
      data: Fixture.body, response: Fixture.response, error: nil, delay: .seconds(30),
      clock: clock)
    let sink = Sink()
    let handler = sink.handler
    let request = Fixture.request
    let early = Sink()
    return Workload(
      async: {
        resumeAll(mock, request, count: count, handler)
        early.calls = sink.calls
        await clock.advance(by: .seconds(30))
      },
      check: {
        guard early.calls == 0 else {
          throw BenchmarkError(
            description: "virtual-time: \(early.calls) answers arrived before the clock moved")
        }
        try sink.check("virtual-time", expected: count)
      })
  }

  /// (7) One mock hit from `threads` threads at once, `count / threads` requests each. The
  /// threads are started outside the timed region and wait at a gate that the timed part
  /// opens.
  static func concurrent(_ count: Int, threads: Int) throws -> Workload {
    guard count % threads == 0 else {
      throw BenchmarkError(description: "threads-\(threads): \(count) requests do not divide")
    }
    let mock = URLSessionMock(data: Fixture.body, response: Fixture.response, error: nil)
    let perThread = count / threads
    let request = Fixture.request
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let sinks = (0..<threads).map { _ in Sink() }
    for sink in sinks {
      let handler = sink.handler
      done.enter()
      Thread {
        gate.wait()
        resumeAll(mock, request, count: perThread, handler)
        done.leave()
      }.start()
    }
    return Workload(
      sync: {
        for _ in 0..<threads { gate.signal() }
        done.wait()
      },
      check: {
        for sink in sinks { try sink.check("threads-\(threads)", expected: perThread) }
      })
  }

  /// `dataTask(with:completionHandler:)` + `resume()`, `count` times, on any session.
  static func completionHandlerLoop(
    _ session: some HTTPSession, _ count: Int, name: String,
    request: URLRequest = Fixture.request
  ) -> Workload {
    let sink = Sink()
    let handler = sink.handler
    return Workload(
      sync: { resumeAll(session, request, count: count, handler) },
      check: { try sink.check(name, expected: count) })
  }
}

/// Creates and resumes `count` data tasks for `request` on `session`.
@inline(never)
func resumeAll<Session: HTTPSession>(
  _ session: Session, _ request: URLRequest, count: Int, _ handler: @escaping Sink.Handler
) {
  for _ in 0..<count {
    session.dataTask(with: request, completionHandler: handler).resume()
  }
}
