import Foundation

/// One scenario's figures over every repetition.
struct ScenarioResult: Sendable {
  let name: String
  let metric: Scenario.Metric
  let requests: Int
  var samples: [Double] = []

  var median: Double {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }

  var unit: String {
    switch metric {
    case .nsPerRequest: return "ns/request"
    case .wallMilliseconds: return "ms total"
    case .requestsPerSecond: return "requests/s"
    case .mebibytes: return "MiB"
    }
  }

  var jsonKey: String {
    switch metric {
    case .nsPerRequest: return "ns_per_request"
    case .wallMilliseconds: return "wall_ms"
    case .requestsPerSecond: return "requests_per_second"
    case .mebibytes: return "mebibytes"
    }
  }
}

/// One of the goals, judged from the medians.
struct Goal {
  let label: String
  /// The measured figure; NaN when a scenario it needs did not run (`--only`).
  let value: Double
  let figure: String
  let met: Bool
}

/// The table, the goals and the JSON, made from the medians of one run.
struct Report: Sendable {
  let results: [ScenarioResult]
  let repetitions: Int
  let quick: Bool

  func median(_ name: String) -> Double {
    results.first { $0.name == name }?.median ?? .nan
  }

  /// The median divided by the baseline's median, for per-request figures.
  func ratioToBaseline(_ result: ScenarioResult) -> Double? {
    let baseline = median("baseline")
    guard case .nsPerRequest = result.metric, !baseline.isNaN else { return nil }
    return result.median / baseline
  }

  /// The goals whose scenarios ran.
  var goals: [Goal] {
    let mock = median("mock")
    var goals: [Goal] = []
    let floor = mock / median("baseline")
    goals.append(
      Goal(
        label: "(2) mock within 4× of baseline", value: floor, figure: times(floor), met: floor <= 4
      ))
    for name in ["mock-1000-exact", "mock-1000-pattern"] {
      let ratio = median(name) / mock
      goals.append(
        Goal(
          label: "(3) \(name) within 2× of mock", value: ratio, figure: times(ratio),
          met: ratio <= 2))
    }
    let slower = median("urlprotocol") / mock
    goals.append(
      Goal(
        label: "(5) urlprotocol at least 200× slower than mock", value: slower,
        figure: times(slower),
        met: slower >= 200))
    for name in ["urlprotocol-bridge", "bridge-intercepted"] {
      let bridge = median(name) / median("urlprotocol")
      goals.append(
        Goal(
          label: "(9) \(name) within 1.25× of urlprotocol", value: bridge, figure: times(bridge),
          met: bridge <= 1.25))
    }
    let wall = median("virtual-time")
    goals.append(
      Goal(
        label: "(6) virtual-time (1,000 × 30 s delays) under 50 ms",
        value: wall, figure: number(wall, decimals: 2) + " ms", met: wall < 50))
    let single = median("threads-1")
    let worst = [2, 4, 8].map { median("threads-\($0)") / single }.min() ?? .nan
    goals.append(
      Goal(
        label: "(7) no collapse: every threads-N ≥ 0.5 × threads-1", value: worst,
        figure: "min " + times(worst),
        met: worst >= 0.5))
    let load = median("har-load-5000") / median("har-parse-5000")
    goals.append(
      Goal(
        label: "(8) har-load-5000 within 3× of har-parse-5000", value: load, figure: times(load),
        met: load <= 3))
    let replayed = median("mock-5000-replayed") / mock
    goals.append(
      Goal(
        label: "(8) mock-5000-replayed within 2× of mock", value: replayed, figure: times(replayed),
        met: replayed <= 2))
    let events = median("stream-events") / median("asyncstream-events")
    goals.append(
      Goal(
        label: "(20) stream-events within 3× of asyncstream-events", value: events,
        figure: times(events), met: events <= 3))
    let messages = median("websocket-messages") / median("asyncstream-messages")
    goals.append(
      Goal(
        label: "(21) websocket-messages within 3× of asyncstream-messages", value: messages,
        figure: times(messages), met: messages <= 3))
    let templated = median("stub-templated") / median("stub-untemplated")
    goals.append(
      Goal(
        label: "(30) stub-templated within 3× of stub-untemplated", value: templated,
        figure: times(templated), met: templated <= 3))
    // The memory goals are judged on the full run's large recording: in a quick run the
    // recording is small, and the runtime's own resident memory makes up most of the figure.
    guard !quick else { return goals.filter { !$0.value.isNaN } }
    let recording = HARMemory.fileMebibytes(entries: HARMemory.entryCount(quick: quick))
    let size = number(recording, decimals: 0) + " MiB"
    let peak = median("har-load-peak") / recording
    goals.append(
      Goal(
        label: "(17) har-load-peak under 3× the recording (\(size))", value: peak,
        figure: times(peak), met: peak < 3))
    let resident = median("har-load-resident") / recording
    goals.append(
      Goal(
        label: "(17) har-load-resident under 2× the recording", value: resident,
        figure: times(resident), met: resident < 2))
    return goals.filter { !$0.value.isNaN }
  }

  var allGoalsMet: Bool { goals.allSatisfy(\.met) }

  func table(wallTime: Duration) -> String {
    var lines: [String] = []
    let mode = quick ? "quick" : "full"
    lines.append(
      "HTTPSessionKit benchmarks (\(mode) run): medians over \(repetitions) interleaved "
        + "repetitions, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    lines.append("")
    lines.append(
      pad("scenario", 20) + pad("requests", 10, right: true) + pad("median", 16, right: true) + "  "
        + pad("unit", 12) + pad("× baseline", 12, right: true) + "  min … max")
    for result in results {
      let decimals = result.metric == .requestsPerSecond ? 0 : (result.median < 100 ? 2 : 1)
      let ratio = ratioToBaseline(result).map { times($0) } ?? "–"
      let spread =
        number(result.samples.min() ?? .nan, decimals: decimals) + " … "
        + number(result.samples.max() ?? .nan, decimals: decimals)
      lines.append(
        pad(result.name, 20) + pad(number(Double(result.requests), decimals: 0), 10, right: true)
          + pad(number(result.median, decimals: decimals), 16, right: true) + "  "
          + pad(result.unit, 12) + pad(ratio, 12, right: true) + "  " + spread)
    }
    lines.append("")
    lines.append("Goals (issue 4; (17): issue 17; (20): issue 20)")
    for goal in goals {
      lines.append(
        "  goal " + pad(goal.label, 56) + pad(goal.figure, 12, right: true) + "  "
          + (goal.met ? "met" : "MISSED"))
    }
    if quick {
      lines.append(
        "  (17) the har-load memory goals are judged in a full run, on its large recording")
    }
    let missed = goals.filter { !$0.met }.count
    lines.append(
      missed == 0
        ? "All \(goals.count) goals met."
        : "\(missed) of \(goals.count) goals MISSED.")
    lines.append("Wall time: " + number(wallTime.nanoseconds / 1e9, decimals: 1) + " s")
    return lines.joined(separator: "\n")
  }

  /// The figures as a JSON array, one object per scenario.
  var json: String {
    let objects = results.map { result -> String in
      var fields = [
        "\"name\": \"\(result.name)\"",
        "\"\(result.jsonKey)\": \(jsonNumber(result.median))",
      ]
      if let ratio = ratioToBaseline(result) {
        fields.append("\"ratio_to_baseline\": \(jsonNumber(ratio))")
      }
      fields.append("\"requests\": \(result.requests)")
      fields.append("\"repetitions\": \(result.samples.count)")
      return "  {" + fields.joined(separator: ", ") + "}"
    }
    return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
  }
}

// MARK: - Formatting

private func times(_ ratio: Double) -> String {
  number(ratio, decimals: ratio < 10 ? 2 : 0) + "×"
}

/// `value` with `decimals` decimals and thousands separated by commas: `1,234.5`.
private func number(_ value: Double, decimals: Int) -> String {
  guard value.isFinite else { return "n/a" }
  let text = String(format: "%.\(decimals)f", abs(value))
  let parts = text.split(separator: ".", maxSplits: 1)
  var whole = String(parts[0])
  var grouped = ""
  while whole.count > 3 {
    grouped = "," + whole.suffix(3) + grouped
    whole.removeLast(3)
  }
  grouped = whole + grouped
  let sign = value < 0 ? "-" : ""
  return sign + grouped + (parts.count > 1 ? "." + parts[1] : "")
}

private func jsonNumber(_ value: Double) -> String {
  value.isFinite ? String(format: "%.3f", value) : "null"
}

private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
  let padding = String(repeating: " ", count: max(0, width - text.count))
  return right ? padding + text : text + padding
}
