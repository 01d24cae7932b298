import Foundation

/// Runs every scenario side by side: one warm-up round, then `repetitions` rounds, each of
/// which measures every scenario once, starting one scenario later each round so that no
/// scenario always runs in the same position.
func runBenchmarks(_ options: Options) async throws -> Report {
  let scenarios = try Scenario.selected(options.only, quick: options.quick)
  let repetitions = options.repetitions ?? (options.quick ? 11 : 15)
  var results = scenarios.map {
    ScenarioResult(name: $0.name, metric: $0.metric, requests: $0.requests)
  }
  progress("warming up")
  for scenario in scenarios where scenario.direct == nil {
    _ = try await scenario.measure()
  }
  for round in 0..<repetitions {
    progress("repetition \(round + 1) of \(repetitions)")
    for offset in scenarios.indices {
      let index = (offset + round) % scenarios.count
      if let most = scenarios[index].maxSamples, results[index].samples.count >= most { continue }
      results[index].samples.append(try await scenarios[index].measure())
    }
  }
  return Report(results: results, repetitions: repetitions, quick: options.quick)
}

extension Scenario {
  /// Every scenario, or only those named (in the table's order); an unknown name throws.
  static func selected(_ names: [String]?, quick: Bool) throws -> [Scenario] {
    let all = all(quick: quick)
    guard let names else { return all }
    if let unknown = names.first(where: { name in !all.contains { $0.name == name } }) {
      let known = all.map(\.name).joined(separator: ", ")
      throw BenchmarkError(description: "no scenario \"\(unknown)\"; the scenarios are \(known)")
    }
    return all.filter { names.contains($0.name) }
  }
}

/// Runs one scenario once, for a profiler: `--profile mock --iterations 20000`.
///
/// The timed part runs inside ``collectedRegion(_:)``, so that
/// `valgrind --tool=callgrind --toggle-collect='*collectedRegion*'` counts only the requests.
func profile(_ name: String, iterations: Int?) async throws {
  guard let scenario = Scenario.all(quick: false).first(where: { $0.name == name }) else {
    let names = Scenario.all(quick: false).map(\.name).joined(separator: ", ")
    throw BenchmarkError(description: "no scenario \"\(name)\"; the scenarios are \(names)")
  }
  let count = iterations ?? scenario.requests
  let workload = try scenario.prepare(count)
  let clock = ContinuousClock()
  let start = clock.now
  switch workload.body {
  case .sync(let body): try collectedRegion(body)
  case .async(let body): try await collectedRegion(body)
  }
  let elapsed = start.duration(to: clock.now)
  try workload.check()
  workload.tearDown()
  progress(
    "profiled \(name): \(count) requests, \(Int(elapsed.nanoseconds / Double(count))) ns/request")
}

/// The region a profiler collects in `--profile` mode.
@inline(never)
func collectedRegion(_ body: () throws -> Void) rethrows {
  try body()
}

/// The region a profiler collects in `--profile` mode, for an async scenario.
@inline(never)
func collectedRegion(_ body: () async throws -> Void) async rethrows {
  try await body()
}

/// A line on standard error, so that standard output holds only the table.
func progress(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Runs `work` on the global executor and blocks the calling thread until it is done.
///
/// `main.swift` stays synchronous on purpose: an async top level parks the main thread in
/// `dispatch_main`, and valgrind crashes there, which would rule out `--profile` under callgrind.
func runBlocking<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) throws
  -> Value
{
  let outcome = Outcome<Value>()
  let done = DispatchSemaphore(value: 0)
  Task.detached {
    do {
      outcome.result = .success(try await work())
    } catch {
      outcome.result = .failure(error)
    }
    done.signal()
  }
  done.wait()
  return try outcome.result!.get()
}

/// Carries a result from a detached task to the thread that waits for it.
private final class Outcome<Value: Sendable>: @unchecked Sendable {
  // @unchecked Sendable: written once by the task before it signals the semaphore, read only
  // after the wait returns.
  var result: Result<Value, any Error>?
}
