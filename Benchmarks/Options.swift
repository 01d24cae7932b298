/// What the command line asked for.
struct Options: Sendable {
  /// A short run for CI: fewer repetitions and requests.
  var quick = false
  /// Where to write the figures as JSON, if anywhere.
  var jsonPath: String?
  /// Exit with a non-zero status when a goal is missed.
  var check = false
  /// Overrides the number of measured repetitions.
  var repetitions: Int?
  /// Measures only these scenarios (in the table's order), if given.
  var only: [String]?
  /// Hidden: run only this scenario, once, for a profiler.
  var profile: String?
  /// Hidden: how many requests `--profile` sends.
  var iterations: Int?
  /// Run the loopback-server scenarios under wrk instead of the doubles' scenarios.
  var server = false
  /// Hidden: be the child of a `har-load` memory scenario, loading this file and checking
  /// this entry.
  var harLoadChild: (path: String, middle: Int)?

  static let usage = """
    usage: benchmarks [--quick] [--json FILE] [--check] [--repetitions N] [--only NAMES]
           benchmarks --server

      --quick          a short run for CI (a few seconds)
      --json FILE      also write the figures to FILE as a JSON array
      --check          exit with status 1 if a goal is missed (the default always exits 0)
      --repetitions N  measure every scenario N times (default 15, or 11 with --quick)
      --only NAMES     measure only these scenarios, comma-separated (to compare with an
                       older build that has fewer: the scenarios that run beside one change
                       its figure)
      --server         the loopback server under wrk (5 s per scenario, 1, 8 and 64
                       connections), beside nginx and python3 -m http.server (needs wrk,
                       nginx-light: apt-get install wrk nginx-light; --quick: 2 s each);
                       then stub-server beside the real WireMock 2.35.1: start-up on 100
                       mappings, RSS, wrk at 1 and 8 connections (needs java, the jar from
                       Tests/fetch-wiremock, and swift build -c release --product stub-server)
    """

  struct UsageError: Error, CustomStringConvertible {
    let description: String
  }

  static func parse(_ arguments: [String]) throws -> Options {
    var options = Options()
    var remaining = arguments[...]
    func value(for flag: String) throws -> String {
      guard let value = remaining.popFirst(), !value.hasPrefix("--") else {
        throw UsageError(description: "\(flag) needs a value")
      }
      return value
    }
    func count(for flag: String) throws -> Int {
      let text = try value(for: flag)
      guard let number = Int(text), number > 0 else {
        throw UsageError(description: "\(flag) needs a positive whole number, not \"\(text)\"")
      }
      return number
    }
    while let argument = remaining.popFirst() {
      switch argument {
      case "--quick": options.quick = true
      case "--server": options.server = true
      case "--check": options.check = true
      case "--json": options.jsonPath = try value(for: argument)
      case "--repetitions": options.repetitions = try count(for: argument)
      case "--only":
        options.only = try value(for: argument).split(separator: ",").map(String.init)
      case "--profile": options.profile = try value(for: argument)
      case "--iterations": options.iterations = try count(for: argument)
      case "--har-load-child":
        options.harLoadChild = (try value(for: argument), try count(for: argument))
      case "-h", "--help": throw UsageError(description: "")
      default: throw UsageError(description: "unknown argument \"\(argument)\"")
      }
    }
    if options.iterations != nil && options.profile == nil {
      throw UsageError(description: "--iterations goes with --profile SCENARIO")
    }
    return options
  }
}
