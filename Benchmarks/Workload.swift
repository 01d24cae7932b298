import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The request and the canned answer every scenario uses.
enum Fixture {
  static let url = URL(string: "https://api.example.com/users/octocat")!
  static let request = URLRequest(url: url)
  static let body = Data(#"{"login":"octocat","id":1}"#.utf8)
  static let response: HTTPURLResponse = HTTPURLResponse(
    url: url, statusCode: 200, httpVersion: "HTTP/1.1",
    headerFields: ["Content-Type": "application/json"])!
}

/// What went wrong in a run: a wrong answer, or a scenario that does not exist.
struct BenchmarkError: Error, CustomStringConvertible {
  let description: String
}

/// Counts what completion handlers receive, so that the work cannot be optimized away and every
/// measured request is checked to have been answered with the canned body.
///
/// The counters live in raw memory rather than in stored properties: a class's stored
/// properties pay for dynamic exclusivity checks on every access, which would add a cost to
/// every scenario that no session causes.
final class Sink: @unchecked Sendable {
  // @unchecked Sendable: a sink is written by one thread at a time: the thread that resumes
  // the tasks (delivery is synchronous), or URLSession's queue while that thread waits on a
  // semaphore, which orders the writes before the reads.
  typealias Handler = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

  private let counters = UnsafeMutablePointer<Int>.allocate(capacity: 3)

  init() {
    counters.initialize(repeating: 0, count: 3)
  }

  deinit {
    counters.deallocate()
  }

  /// Handlers that ran.
  var calls: Int {
    get { counters[0] }
    set { counters[0] = newValue }
  }

  /// Body bytes they received.
  var bytes: Int {
    get { counters[1] }
    set { counters[1] = newValue }
  }

  /// Handlers that received an error or no response.
  var failures: Int {
    get { counters[2] }
    set { counters[2] = newValue }
  }

  /// A handler that records into this sink; made once, outside the timed loop.
  var handler: Handler {
    { [self] data, response, error in
      counters[0] += 1
      counters[1] += data?.count ?? 0
      if error != nil || response == nil { counters[2] += 1 }
    }
  }

  /// Throws unless exactly `expected` handlers ran, each with the canned body and no error.
  func check(_ scenario: String, expected: Int) throws {
    let bytesExpected = expected * Fixture.body.count
    guard calls == expected, bytes == bytesExpected, failures == 0 else {
      throw BenchmarkError(
        description: "\(scenario): expected \(expected) answers with \(bytesExpected) bytes, got "
          + "\(calls) answers, \(bytes) bytes, \(failures) failures")
    }
  }
}

/// A scenario's timed work, made ready (sessions created, stubs added, threads started)
/// outside the timed region.
struct Workload {
  enum Body {
    case sync(() throws -> Void)
    case async(() async throws -> Void)
  }

  /// The timed part.
  let body: Body
  /// Checks the answers after the timed part.
  let check: () throws -> Void
  /// Releases what the workload holds (threads, sessions) after the check.
  var tearDown: () -> Void = {}

  init(sync body: @escaping () throws -> Void, check: @escaping () throws -> Void) {
    self.body = .sync(body)
    self.check = check
  }

  init(async body: @escaping () async throws -> Void, check: @escaping () throws -> Void) {
    self.body = .async(body)
    self.check = check
  }

  /// Runs the timed part and returns how long it took on `ContinuousClock`.
  func time() async throws -> Duration {
    let clock = ContinuousClock()
    let start: ContinuousClock.Instant
    switch body {
    case .sync(let run):
      start = clock.now
      try run()
    case .async(let run):
      start = clock.now
      try await run()
    }
    return start.duration(to: clock.now)
  }
}

/// Keeps a value alive and opaque to the optimizer.
@inline(never)
func consume<T>(_ value: T) {
  withExtendedLifetime(value) {}
}

extension Duration {
  var nanoseconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
  }
}
