import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The real WireMock 2.35.1 beside `stub-server`, part of `benchmarks --server`: the same
// WireMock root folder served by both, both journals on.
//
// - Start-up: a folder of 100 mappings; the time from launching the process until
//   `GET /__admin` answers (stub-server: 200; WireMock: 302), and the resident memory (VmRSS of /proc/PID/status) then.
// - Throughput: a folder with one small mapping (the 26-byte JSON body); after a warm-up run
//   (WireMock's JIT needs one), wrk at 1 and 8 keep-alive connections; then the RSS again.
// - Templated throughput: a folder with one templated mapping (`response-template`, the
//   injected benchmark's body: five request fields and a `jsonPath` of the request body),
//   WireMock started with `--local-response-templating`; wrk POSTs the body (a Lua script) at
//   1 and 8 connections after a warm-up.
//
// Skipped, with a line saying why, when java, the jar (Tests/fetch-wiremock) or the stub-server
// binary (built beside the benchmarks) is missing.

/// What one server measured: start-up and memory.
struct StartupResult {
  let server: String
  let seconds: Double
  let residentBytes: Int?
}

/// The WireMock scenarios' wrk results, added to the server table, and their own table of
/// start-up and memory, printed now.
func runWireMockBenchmarks(wrk: String, seconds: Int) throws -> [WrkResult] {
  guard let java = program("java") else {
    print(
      "WireMock scenarios skipped: java is not installed (apt-get install openjdk-17-jre-headless)")
    return []
  }
  guard let jar = wireMockJar() else {
    print("WireMock scenarios skipped: the jar is missing (run Tests/fetch-wiremock)")
    return []
  }
  let stubServer = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("stub-server").path
  guard FileManager.default.isExecutableFile(atPath: stubServer) else {
    print(
      "WireMock scenarios skipped: stub-server is not built beside the benchmarks "
        + "(swift build -c release --product stub-server)")
    return []
  }
  let folder = FileManager.default.temporaryDirectory
    .appendingPathComponent("wiremock-bench-\(UUID().uuidString)", isDirectory: true)
  defer { try? FileManager.default.removeItem(at: folder) }
  let many = folder.appendingPathComponent("many")
  let one = folder.appendingPathComponent("one")
  try writeMappings(into: many, count: 100)
  try writeMappings(into: one, count: 1)
  let templated = folder.appendingPathComponent("templated")
  try writeTemplatedMapping(into: templated)
  let script = folder.appendingPathComponent("post.lua")
  try Data(
    (#"wrk.method = "POST"\#n"# + #"wrk.body = '{"name": "Ada", "id": 42}'\#n"#
      + #"wrk.headers["Content-Type"] = "application/json"\#n"#
      + #"wrk.headers["X-User"] = "ada"\#n"#).utf8
  ).write(to: script)

  let commands: [(name: String, command: (Int, URL) -> (String, [String]))] = [
    (
      "WireMock 2.35.1",
      { port, root in
        (
          java,
          [
            "-jar", jar, "--port", String(port), "--bind-address", "127.0.0.1", "--root-dir",
            root.path,
          ]
        )
      }
    ),
    (
      "stub-server",
      { port, root in
        (
          stubServer,
          ["--port", String(port), "--bind-address", "127.0.0.1", "--root-dir", root.path]
        )
      }
    ),
  ]

  var startups: [StartupResult] = []
  for (name, command) in commands {
    let port = freePort()
    let (path, arguments) = command(port, many)
    progress("start-up: \(name), 100 mappings")
    let clock = ContinuousClock()
    let began = clock.now
    let process = try start(path, arguments)
    defer { stopProcess(process) }
    guard waitForAdmin(port, within: .seconds(60)) else {
      print("\(name) did not answer GET /__admin within 60 s")
      continue
    }
    let elapsed = began.duration(to: clock.now)
    startups.append(
      StartupResult(
        server: name,
        seconds: Double(elapsed.components.seconds)
          + Double(elapsed.components.attoseconds) / 1e18,
        residentBytes: residentBytes(of: process.processIdentifier)))
  }

  var results: [WrkResult] = []
  var loaded: [StartupResult] = []
  for (name, command) in commands {
    let port = freePort()
    let (path, arguments) = command(port, one)
    let process = try start(path, arguments)
    defer { stopProcess(process) }
    guard waitForAdmin(port, within: .seconds(60)) else {
      print("\(name) did not answer GET /__admin within 60 s")
      continue
    }
    let url = "http://127.0.0.1:\(port)/hello.json"
    progress("wrk: \(name), warm-up")
    _ = try runWrk(wrk, name, url, 8, seconds)
    for connections in [1, 8] {
      progress("wrk: \(name), \(connections) connection(s)")
      results.append(try runWrk(wrk, name, url, connections, seconds))
    }
    loaded.append(
      StartupResult(
        server: name, seconds: 0, residentBytes: residentBytes(of: process.processIdentifier)))
  }
  // The templated mapping, each server templating it as it is told to.
  for (name, command) in commands {
    let port = freePort()
    var (path, arguments) = command(port, templated)
    if name.hasPrefix("WireMock") { arguments.append("--local-response-templating") }
    let process = try start(path, arguments)
    defer { stopProcess(process) }
    guard waitForAdmin(port, within: .seconds(60)) else {
      print("\(name) did not answer GET /__admin within 60 s")
      continue
    }
    let url = "http://127.0.0.1:\(port)/users/42?q=x"
    progress("wrk: \(name) templated, warm-up")
    _ = try runWrk(wrk, name, url, 8, seconds, script: script.path)
    // Short enough for the table's column.
    let label = name.hasPrefix("WireMock") ? "WireMock templated" : name + " templated"
    for connections in [1, 8] {
      progress("wrk: \(label), \(connections) connection(s)")
      results.append(try runWrk(wrk, label, url, connections, seconds, script: script.path))
    }
  }
  print(wireMockTable(startups, loaded: loaded, results, seconds: seconds))
  return results
}

/// Writes a WireMock root with one templated mapping: `POST /users/{id}` answered with the
/// injected benchmark's template (``Scenario/templateBody``).
private func writeTemplatedMapping(into root: URL) throws {
  let mappings = root.appendingPathComponent("mappings", isDirectory: true)
  try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
  let mapping: [String: Any] = [
    "request": ["method": "POST", "urlPathPattern": "/users/[0-9]+"],
    "response": [
      "status": 200, "body": Scenario.templateBody, "transformers": ["response-template"],
      "headers": ["Content-Type": "application/json"],
    ],
  ]
  try JSONSerialization.data(withJSONObject: mapping).write(
    to: mappings.appendingPathComponent("templated.json"))
}

/// The start-up, memory and throughput table, with the issue's goals.
private func wireMockTable(
  _ startups: [StartupResult], loaded: [StartupResult], _ results: [WrkResult], seconds: Int
) -> String {
  func megabytes(_ bytes: Int?) -> String {
    bytes.map { String(format: "%.0f MB", Double($0) / 1_048_576) } ?? "?"
  }
  var lines = [
    "WireMock scenarios: start-up on 100 mappings (until GET /__admin answers), RSS then and "
      + "after wrk (1 mapping, \(seconds) s a run, after a warm-up)",
    "server                start-up   RSS at start   RSS after wrk",
  ]
  for startup in startups {
    let after = loaded.first { $0.server == startup.server }?.residentBytes
    lines.append(
      startup.server.padding(toLength: 22, withPad: " ", startingAt: 0)
        + String(format: "%.3f s", startup.seconds).leftPadded(9)
        + megabytes(startup.residentBytes).leftPadded(15) + megabytes(after).leftPadded(16))
  }
  func rate(_ server: String, _ connections: Int) -> Double? {
    results.first { $0.server == server && $0.connections == connections }?.requestsPerSecond
  }
  for connections in [1, 8] {
    if let ours = rate("stub-server", connections),
      let theirs = rate("WireMock 2.35.1", connections)
    {
      lines.append(
        goal("\(connections) connection(s): at least 3x WireMock", ours / theirs, 3))
    }
  }
  for connections in [1, 8] {
    if let ours = rate("stub-server templated", connections),
      let theirs = rate("WireMock templated", connections)
    {
      lines.append(
        String(
          format: "templated, %d connection(s): stub-server %.0f/s, WireMock %.0f/s (%.2fx)",
          connections, ours, theirs, ours / theirs))
    }
  }
  if let ours = startups.first(where: { $0.server == "stub-server" }) {
    lines.append(
      "goal: start-up under 0.2 s on 100 mappings: \(String(format: "%.3f s", ours.seconds)) "
        + (ours.seconds < 0.2 ? "met" : "MISSED"))
    if let theirs = startups.first(where: { $0.server == "WireMock 2.35.1" }),
      let mine = ours.residentBytes, let java = theirs.residentBytes, java > 0
    {
      let ratio = Double(mine) / Double(java)
      lines.append(
        "goal: RSS under 1/10 of WireMock's at start: \(String(format: "%.3f", ratio)) "
          + (ratio < 0.1 ? "met" : "MISSED"))
    }
  }
  if let mine = loaded.first(where: { $0.server == "stub-server" })?.residentBytes,
    let java = loaded.first(where: { $0.server == "WireMock 2.35.1" })?.residentBytes, java > 0
  {
    let ratio = Double(mine) / Double(java)
    lines.append(
      "goal: RSS under 1/10 of WireMock's after wrk: \(String(format: "%.3f", ratio)) "
        + (ratio < 0.1 ? "met" : "MISSED"))
  }
  return lines.joined(separator: "\n")
}

/// Writes a WireMock root with `count` mappings; the first answers `GET /hello.json` with the
/// 26-byte body, the others other paths of every kind.
private func writeMappings(into root: URL, count: Int) throws {
  let mappings = root.appendingPathComponent("mappings", isDirectory: true)
  try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
  let escaped = serverBody.replacingOccurrences(of: "\"", with: "\\\"")
  for index in 0..<count {
    let text: String
    switch index {
    case 0:
      text =
        #"{"request": {"method": "GET", "url": "/hello.json"}, "response": {"status": 200, "body": ""#
        + escaped + #"", "headers": {"Content-Type": "application/json"}}}"#
    case let n where n % 3 == 0:
      text =
        #"{"request": {"method": "POST", "urlPath": "/items/\#(n)", "bodyPatterns": [{"equalToJson": {"n": \#(n)}}]}, "response": {"status": 201, "jsonBody": {"id": \#(n)}}}"#
    case let n where n % 3 == 1:
      text =
        #"{"request": {"method": "GET", "urlPathPattern": "/orders/\#(n)/[0-9]+", "headers": {"Accept": {"contains": "json"}}}, "response": {"status": 200, "body": "order \#(n)"}}"#
    default:
      text =
        #"{"priority": 3, "request": {"urlPath": "/q/\#(index)", "queryParameters": {"a": {"equalTo": "1"}}}, "response": {"status": 204, "headers": {"X-N": "\#(index)"}}}"#
    }
    try Data(text.utf8).write(
      to: mappings.appendingPathComponent(String(format: "%03d.json", index)))
  }
}

/// The jar: `HTTPSESSIONKIT_WIREMOCK_JAR`, else `.build/wiremock` under the current folder
/// (the package's root, where `swift run` runs).
private func wireMockJar() -> String? {
  let candidates = [
    ProcessInfo.processInfo.environment["HTTPSESSIONKIT_WIREMOCK_JAR"],
    FileManager.default.currentDirectoryPath
      + "/.build/wiremock/wiremock/server/wiremock-standalone-2.35.1.jar",
  ].compactMap { $0 }
  return candidates.first { FileManager.default.fileExists(atPath: $0) }
}

/// VmRSS of /proc/`pid`/status in bytes, or `nil` where there is no /proc.
private func residentBytes(of pid: Int32) -> Int? {
  guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
    return nil
  }
  for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
    let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    return kilobytes.map { $0 * 1024 }
  }
  return nil
}

/// Polls `GET /__admin` on 127.0.0.1:`port` every 2 ms until it answers, up to `limit`.
private func waitForAdmin(_ port: Int, within limit: Duration) -> Bool {
  let clock = ContinuousClock()
  let deadline = clock.now.advanced(by: limit)
  while clock.now < deadline {
    if adminAnswers(port) { return true }
    usleep(2_000)
  }
  return false
}

/// Whether one `GET /__admin` on 127.0.0.1:`port` gets an HTTP answer: `stub-server` answers
/// 200, WireMock 2.35.1 a 302 to its admin page.
private func adminAnswers(_ port: Int) -> Bool {
  #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
  #endif
  guard fd >= 0 else { return false }
  defer { close(fd) }
  var timeout = timeval(tv_sec: 2, tv_usec: 0)
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard connected == 0 else { return false }
  let request = Array("GET /__admin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
  guard send(fd, request, request.count, 0) == request.count else { return false }
  var buffer = [UInt8](repeating: 0, count: 64)
  let read = recv(fd, &buffer, buffer.count, 0)
  guard read >= 9 else { return false }
  return String(decoding: buffer[0..<9], as: UTF8.self).hasPrefix("HTTP/1.")
}
