import Foundation
import HTTPSessionKit
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The HAR scenarios: loading a large recording, and routing among its replayed stubs.
///
/// The recording is generated once per run: 5,000 entries of about 2 KB each (request and
/// response headers as a browser writes them, a JSON body), about 10 MB in all. The middle
/// entry answers with the canned body, so that the sink's check proves the route. `HAR_ENTRIES`
/// in the environment changes the count, for a profiler (`HAR_ENTRIES=300 valgrind ...
/// --profile har-load-5000`), where generating 5,000 entries would take minutes.
enum HARBenchmark {
  static let entryCount = Int(ProcessInfo.processInfo.environment["HAR_ENTRIES"] ?? "") ?? 5_000
  static let middle = entryCount / 2

  /// The request the middle entry recorded.
  static let request = URLRequest(
    url: URL(string: "https://api.example.com/items/\(middle)?page=1&per_page=50")!)

  /// The generated HAR document.
  static let document: Data = {
    let filler = String(repeating: "lorem ipsum dolor sit amet ", count: 56)
    var entries: [[String: Any]] = []
    entries.reserveCapacity(entryCount)
    for index in 0..<entryCount {
      let body =
        index == middle
        ? String(decoding: Fixture.body, as: UTF8.self)
        : #"{"id":\#(index),"name":"item \#(index)","description":"\#(filler)"}"#
      let header = { (name: String, value: String) in ["name": name, "value": value] }
      entries.append([
        "startedDateTime": "2026-11-30T10:00:00.000Z", "time": 12.5,
        "_initiator": ["type": "script"], "_priority": "High", "cache": [String: Any](),
        "request": [
          "method": "GET",
          "url": "https://api.example.com/items/\(index)?page=1&per_page=50",
          "httpVersion": "http/2.0", "cookies": [Any](), "headersSize": -1, "bodySize": 0,
          "headers": [
            header(":authority", "api.example.com"), header(":method", "GET"),
            header("accept", "application/json"), header("accept-language", "en-GB,en;q=0.9"),
            header("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"),
            header("referer", "https://app.example.com/items"),
          ],
          "queryString": [
            ["name": "page", "value": "1"], ["name": "per_page", "value": "50"],
          ],
        ] as [String: Any],
        "response": [
          "status": 200, "statusText": "", "httpVersion": "http/2.0", "cookies": [Any](),
          "headers": [
            header("content-type", "application/json"), header("content-encoding", "br"),
            header("cache-control", "private, max-age=60"), header("etag", "W/\"\(index)\""),
            header("x-request-id", UUID().uuidString), header("vary", "Accept, Accept-Encoding"),
          ],
          "content": ["size": body.utf8.count, "mimeType": "application/json", "text": body],
          "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 900,
        ] as [String: Any],
        "timings": [
          "blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": 12, "receive": 0.5,
        ],
      ])
    }
    let root: [String: Any] = [
      "log": [
        "version": "1.2", "creator": ["name": "WebInspector", "version": "537.36"],
        "entries": entries,
      ] as [String: Any]
    ]
    // swift-format-ignore: NeverUseForceTry
    return try! JSONSerialization.data(withJSONObject: root)
  }()

  /// The document in a file, as a test would load it.
  static let file: URL = {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("benchmark-\(ProcessInfo.processInfo.processIdentifier).har")
    // swift-format-ignore: NeverUseForceTry
    try! document.write(to: url)
    HARMemory.removeAfterTheRun(url)
    return url
  }()

  /// The bundle the document loads as, for the routing scenario.
  static let bundle: MockBundle = {
    // swift-format-ignore: NeverUseForceTry
    try! MockBundle(contentsOf: file)
  }()
}

extension Scenario {
  /// `har-load-5000` beside `har-parse-5000`, `mock-5000-replayed`, and the memory of
  /// loading a large recording (`har-load-peak`, `har-load-resident`).
  static func harScenarios(quick: Bool) -> [Scenario] {
    let perRequest = quick ? 5_000 : 30_000
    return [
      Scenario(name: "har-parse-5000", metric: .wallMilliseconds, requests: 1) { _ in
        let data = HARBenchmark.document
        var parsed: Any?
        return Workload(
          sync: { parsed = try JSONSerialization.jsonObject(with: data) },
          check: {
            guard parsed is [String: Any] else {
              throw BenchmarkError(description: "har-parse-5000: the document did not parse")
            }
          })
      },
      Scenario(name: "har-load-5000", metric: .wallMilliseconds, requests: 1) { _ in
        let file = HARBenchmark.file
        var mock: URLSessionMock?
        return Workload(
          sync: { mock = URLSessionMock(bundle: try MockBundle(contentsOf: file)) },
          check: {
            guard let mock else { throw BenchmarkError(description: "har-load-5000: no mock") }
            let sink = Sink()
            mock.dataTask(with: HARBenchmark.request, completionHandler: sink.handler).resume()
            try sink.check("har-load-5000", expected: 1)
          })
      },
      Scenario(name: "mock-5000-replayed", metric: .nsPerRequest, requests: perRequest) { count in
        let mock = URLSessionMock(bundle: HARBenchmark.bundle)
        return completionHandlerLoop(
          mock, count, name: "mock-5000-replayed", request: HARBenchmark.request)
      },
      // Memory, each sample from a child process of its own; three samples are plenty.
      Scenario(
        name: "har-load-peak", metric: .mebibytes, requests: HARMemory.entryCount(quick: quick),
        samples: 3
      ) { try HARMemory.measure(entries: HARMemory.entryCount(quick: quick)).peak / 1024 },
      Scenario(
        name: "har-load-resident", metric: .mebibytes,
        requests: HARMemory.entryCount(quick: quick), samples: 3
      ) { try HARMemory.measure(entries: HARMemory.entryCount(quick: quick)).resident / 1024 },
    ]
  }
}

/// Loading a large HAR recording, measured for memory: issue 17's case was a 200 MB export of
/// 86,237 entries. Each measurement runs in a child process (this program again, with
/// `--har-load-child FILE`), because a process's peak resident size only ever grows: the child
/// loads the file into a mock, checks one replayed answer, and reports its `VmHWM` (the peak)
/// and `VmRSS` (what stays resident while the mock serves) from `/proc/self/status`.
///
/// The recording is generated once per run, written entry by entry so that the parent's own
/// memory stays small: 86,237 entries of about 2.3 KB (browser-like headers, a JSON body), about
/// 200 MB (8,624 entries, about 20 MB, with `--quick`; `HAR_MEMORY_ENTRIES` sets the count).
/// The file is removed at the end of the run; `HAR_MEMORY_KEEP` keeps it, for a heap profiler
/// on the child (`heaptrack .build/release/benchmarks --har-load-child FILE 43118`).
enum HARMemory {
  /// The figures one child reports, in KiB.
  struct Figures {
    var peak: Double
    var resident: Double
    /// Resident before the file was read: the runtime and this program.
    var before: Double
  }

  static func entryCount(quick: Bool) -> Int {
    Int(ProcessInfo.processInfo.environment["HAR_MEMORY_ENTRIES"] ?? "") ?? (quick ? 8_624 : 86_237)
  }

  /// The generated files, by entry count, so that each is written once per run.
  private static let files = GeneratedFiles()

  /// The recording of `count` entries, generated on first use.
  static func file(entries count: Int) throws -> URL {
    try files.withLock { files in
      if let file = files[count] { return file }
      let file = FileManager.default.temporaryDirectory.appendingPathComponent(
        "benchmark-\(ProcessInfo.processInfo.processIdentifier)-\(count).har")
      try write(entries: count, to: file)
      files[count] = file
      return file
    }
  }

  /// The size of the recording of `count` entries, in MiB (NaN before it is generated).
  static func fileMebibytes(entries count: Int) -> Double {
    guard let file = files.withLock({ $0[count] }),
      let size = try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
    else { return .nan }
    return Double(size) / 1_048_576
  }

  /// Removes the generated recordings (and the other files given to ``removeAfterTheRun(_:)``).
  static func removeFiles() {
    guard ProcessInfo.processInfo.environment["HAR_MEMORY_KEEP"] == nil else { return }
    for file in files.withLock({ $0.values }) { try? FileManager.default.removeItem(at: file) }
  }

  /// Has ``removeFiles()`` remove `file` too: the 5,000-entry recording.
  static func removeAfterTheRun(_ file: URL) {
    files.withLock { $0[-$0.count - 1] = file }  // negative keys: not a recording by count
  }

  /// The request that entry `index` recorded.
  static func request(_ index: Int) -> URLRequest {
    URLRequest(url: URL(string: "https://api.example.com/items/\(index)?page=1&per_page=50")!)
  }

  private static func write(entries count: Int, to file: URL) throws {
    guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
      throw BenchmarkError(description: "har-load: cannot create \(file.path)")
    }
    let handle = try FileHandle(forWritingTo: file)
    defer { try? handle.close() }
    let filler = String(repeating: "lorem ipsum dolor sit amet ", count: 31)
    let middleBody = HARFixtureText.quoted(String(decoding: Fixture.body, as: UTF8.self))
    var chunk =
      #"{"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": [], "entries": ["#
    for index in 0..<count {
      let body =
        index == count / 2
        ? middleBody
        : HARFixtureText.quoted(
          #"{"id":\#(index),"name":"item \#(index)","description":"\#(filler)"}"#)
      if index > 0 { chunk += ",\n" }
      chunk += """
        {"startedDateTime": "2026-11-30T10:00:00.000Z", "time": 12.5, "_initiator": {"type": "script"}, \
        "_priority": "High", "cache": {}, "request": {"method": "GET", \
        "url": "https://api.example.com/items/\(index)?page=1&per_page=50", "httpVersion": "http/2.0", \
        "cookies": [], "headersSize": -1, "bodySize": 0, "headers": [\
        {"name": ":authority", "value": "api.example.com"}, {"name": ":method", "value": "GET"}, \
        {"name": "accept", "value": "application/json"}, {"name": "accept-language", "value": "en-GB,en;q=0.9"}, \
        {"name": "user-agent", "value": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"}, \
        {"name": "referer", "value": "https://app.example.com/items"}], \
        "queryString": [{"name": "page", "value": "1"}, {"name": "per_page", "value": "50"}]}, \
        "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0", "cookies": [], "headers": [\
        {"name": "content-type", "value": "application/json"}, {"name": "content-encoding", "value": "br"}, \
        {"name": "cache-control", "value": "private, max-age=60"}, {"name": "etag", "value": "W/\\"\(index)\\""}, \
        {"name": "x-request-id", "value": "\(UUID().uuidString)"}, {"name": "vary", "value": "Accept, Accept-Encoding"}], \
        "content": {"size": \(body.utf8.count - 2), "mimeType": "application/json", "text": \(body)}, \
        "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 900}, \
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": 12, "receive": 0.5}}
        """
      if chunk.utf8.count > 1 << 20 {
        try handle.write(contentsOf: Data(chunk.utf8))
        chunk = ""
      }
    }
    chunk += "]}}\n"
    try handle.write(contentsOf: Data(chunk.utf8))
  }

  /// Runs one child on the recording of `count` entries and returns what it reports.
  static func measure(entries count: Int) throws -> Figures {
    let file = try file(entries: count)
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    child.arguments = ["--har-load-child", file.path, String(count / 2)]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    let fields = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap {
      Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    guard child.terminationStatus == 0, fields.count == 3 else {
      throw BenchmarkError(
        description: "har-load: the child exited with \(child.terminationStatus) and printed "
          + "\"\(String(decoding: data, as: UTF8.self))\"")
    }
    return Figures(peak: fields[0], resident: fields[1], before: fields[2])
  }

  /// The child's side: loads `path` into a mock, checks that entry `middle` replays, and
  /// prints `peak resident before` in KiB.
  static func child(path: String, middle: Int) throws {
    let before = try status("VmRSS")
    let mock = URLSessionMock(bundle: try MockBundle(contentsOf: URL(fileURLWithPath: path)))
    let sink = Sink()
    mock.dataTask(with: request(middle), completionHandler: sink.handler).resume()
    try sink.check("har-load", expected: 1)
    let peak = try status("VmHWM")
    let resident = try status("VmRSS")
    withExtendedLifetime(mock) {
      FileHandle.standardOutput.write(Data("\(Int(peak)) \(Int(resident)) \(Int(before))\n".utf8))
      // Ends with the mock alive: a heap profiler then lists what the loaded mock holds as
      // "leaked" (`heaptrack benchmarks --har-load-child FILE N`).
      exit(0)
    }
  }

  /// A `kB` field of `/proc/self/status`.
  private static func status(_ field: String) throws -> Double {
    let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
      if let value = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) }) {
        return value
      }
    }
    throw BenchmarkError(description: "har-load: /proc/self/status has no \(field)")
  }
}

/// JSON string literals for the generated recordings.
enum HARFixtureText {
  static func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}

/// The recordings a run has generated, by entry count.
final class GeneratedFiles: @unchecked Sendable {
  // @unchecked Sendable: `files` is only reached under `lock`.
  private let lock = NSLock()
  private var files: [Int: URL] = [:]

  func withLock<Result>(_ body: (inout [Int: URL]) throws -> Result) rethrows -> Result {
    try lock.withLock { try body(&files) }
  }
}
