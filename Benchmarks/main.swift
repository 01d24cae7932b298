// Measures the doubles side by side with the physical floor and the URLProtocol way.
//
//   swift run -c release benchmarks [--quick] [--json FILE] [--check]
//
// See Options.usage for the flags, and Scenario.all for what each scenario does.

import Foundation

let options: Options
do {
  options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  let message = "\(error)"
  if message.isEmpty {
    print(Options.usage)  // --help
    exit(0)
  }
  progress("benchmarks: \(message)\n\n" + Options.usage)
  exit(2)
}

do {
  if let child = options.harLoadChild {
    try HARMemory.child(path: child.path, middle: child.middle)
    exit(0)
  }
  if options.server {
    try runServerBenchmarks(seconds: options.quick ? 2 : 5)
    exit(0)
  }
  if let name = options.profile {
    try runBlocking { try await profile(name, iterations: options.iterations) }
    exit(0)
  }
  let clock = ContinuousClock()
  let started = clock.now
  let report = try runBlocking { try await runBenchmarks(options) }
  print(report.table(wallTime: started.duration(to: clock.now)))
  HARMemory.removeFiles()
  if let path = options.jsonPath {
    try Data(report.json.utf8).write(to: URL(fileURLWithPath: path))
  }
  exit(options.check && !report.allGoalsMet ? 1 : 0)
} catch {
  HARMemory.removeFiles()
  progress("benchmarks: \(error)")
  exit(1)
}
