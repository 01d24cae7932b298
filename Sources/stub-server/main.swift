// `swift run stub-server BUNDLE [--port N] [--host H] [--directory DIR]`: serves a MockBundle
// (a MockingBird folder, our bundle.json, a HAR file) and optionally a folder of static files on
// the loopback interface, with no Swift written. Prints the base URL as the first line of
// standard output, then one line per request; stops on SIGINT or SIGTERM. Exits 0 when stopped
// by a signal, 2 for bad arguments, an unreadable bundle or a server that cannot start.

import Dispatch
import Foundation
import HTTPSessionMocks
import HTTPSessionServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

let usage = """
  usage: stub-server BUNDLE [--port N] [--host H] [--origin URL] [--directory DIR]
                            [--journal N]
         stub-server --directory DIR [--port N] [--host H] [--journal N]

  Serves the stubs of BUNDLE over HTTP on the loopback interface: a folder holding
  bundle.json (ours or a MockingBird Mock-Bundle), a bundle .json file or a .har file.

  Options:
    --port N         the TCP port (default 0: the system picks a free one)
    --host H         a loopback address: 127.0.0.1 (default), another 127.x.y.z, ::1 or
                     localhost
    --origin URL     answer each request as if it had been sent to URL's scheme, host and
                     port, such as https://api.github.com, so that stubs recorded with
                     absolute URLs (HAR files, MockingBird's ://host/path) match
    --directory DIR  also serve the files under DIR at / (the bundle's stubs win where
                     they match)
    --journal N      keep the newest N requests in memory (default 10000; 0 for none), so
                     that a long-running server keeps bounded memory
    -h, --help       show this help

  The first line of standard output is the server's base URL, such as
  http://127.0.0.1:54321; then one line per request: method, path, status and the stub
  that answered, or "unmatched" with the closest stub and what differed (the full report
  goes to standard error). SIGINT (Ctrl-C) or SIGTERM stops the server.

  """

/// Serializes the log lines of concurrent connections.
let outputLock = NSLock()

/// Writes one line to standard output at once: unbuffered, so that a reader sees it at once,
/// and under `outputLock`, so that lines from two connections never interleave.
func emit(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  outputLock.withLock {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        return
      }
      offset += written
    }
  }
}

/// Writes `message` to standard error and exits with status 2.
func fail(_ message: String, showingUsage: Bool = false) -> Never {
  FileHandle.standardError.write(
    Data(("stub-server: \(message)\n" + (showingUsage ? "\n" + usage : "")).utf8))
  exit(2)
}

/// `line` without the call sites of this file (every stub is registered here, so
/// ` (registered at stub_server/main.swift:140)` says nothing to the reader of the log).
func withoutOwnSite(_ line: String) -> String {
  var text = line
  let marker = " (registered at \(#fileID):"
  while let start = text.range(of: marker) {
    guard let end = text[start.upperBound...].firstIndex(of: ")") else { break }
    text.removeSubrange(start.lowerBound...end)
  }
  return text
}

/// Stops the server and exits 0 on SIGINT and SIGTERM: the signals are ignored as signals and
/// handled as events of Dispatch signal sources, on a queue of their own. Returns once both
/// sources are registered, so that a signal sent as soon as the base URL is read is not lost.
/// (Not top-level code: its closures must not be isolated to the main actor, as they run on
/// the sources' queue.)
func installStopSignals(stopping server: LoopbackServer) -> [any DispatchSourceSignal] {
  let queue = DispatchQueue(label: "stub-server.signals")
  let registered = DispatchGroup()
  var sources: [any DispatchSourceSignal] = []
  for number in [SIGINT, SIGTERM] {
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
    registered.enter()
    source.setRegistrationHandler { registered.leave() }
    source.setEventHandler {
      server.stop()
      exit(0)
    }
    source.resume()
    sources.append(source)
  }
  registered.wait()
  return sources
}

struct Options {
  var bundle: String?
  var port = 0
  var host = "127.0.0.1"
  var directory: String?
  var origin: URLComponents?
  var limits = ServerLimits()
}

/// Reads the command line; `--name value` and `--name=value` both work.
func parse(_ arguments: [String]) -> Options {
  var options = Options()
  var rest = arguments[...]
  func value(of name: String, inline: String?) -> String {
    if let inline { return inline }
    guard let next = rest.popFirst() else { fail("\(name) needs a value", showingUsage: true) }
    return next
  }
  while let argument = rest.popFirst() {
    let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
    let name = parts[0]
    let inline = argument.hasPrefix("--") && parts.count == 2 ? parts[1] : nil
    switch name {
    case "-h", "--help":
      print(usage, terminator: "")
      exit(0)
    case "--port":
      let text = value(of: name, inline: inline)
      guard let port = Int(text), (0...65_535).contains(port) else {
        fail("--port expects a number from 0 to 65535, got \"\(text)\"")
      }
      options.port = port
    case "--host":
      options.host = value(of: name, inline: inline)
    case "--origin":
      let text = value(of: name, inline: inline)
      guard let parts = URLComponents(string: text),
        ["http", "https"].contains(parts.scheme?.lowercased() ?? ""),
        let host = parts.host, !host.isEmpty, parts.path.isEmpty || parts.path == "/",
        parts.query == nil
      else {
        fail("--origin expects a URL such as https://api.github.com, got \"\(text)\"")
      }
      options.origin = parts
    case "--directory":
      options.directory = value(of: name, inline: inline)
    case "--journal":
      let text = value(of: name, inline: inline)
      guard let count = Int(text), count >= 0 else {
        fail("--journal expects a number of requests, 0 or more, got \"\(text)\"")
      }
      options.limits.maxJournalExchanges = count
    default:
      if argument.hasPrefix("-") { fail("unknown option \(argument)", showingUsage: true) }
      if let bundle = options.bundle {
        fail("one BUNDLE only (got \(bundle) and \(argument))", showingUsage: true)
      }
      options.bundle = argument
    }
  }
  if options.bundle == nil && options.directory == nil {
    fail("name a BUNDLE to serve, or --directory DIR", showingUsage: true)
  }
  return options
}

#if canImport(Glibc)
  // Bodies of megabytes come and go. After the first such buffer is freed, glibc's malloc raises
  // its mmap threshold and keeps later ones in its heaps, so a few large requests would hold
  // their memory for as long as the server runs; with a fixed threshold each large buffer goes
  // back to the system when it is freed. (This process is the tool's own: no library sets it.)
  // `mallopt` and `M_MMAP_THRESHOLD` (-3) are not in Swift's Glibc module: looked up by name.
  if let symbol = dlsym(nil, "mallopt") {
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    _ = unsafeBitCast(symbol, to: Mallopt.self)(-3, 128 * 1024)
  }
#endif

let options = parse(Array(CommandLine.arguments.dropFirst()))
let mock = URLSessionMock()
if let directory = options.directory {
  var isDirectory: ObjCBool = false
  guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory),
    isDirectory.boolValue
  else {
    fail("--directory \(directory): no such folder")
  }
  // Registered first, so that the bundle's stubs (newer) win where they match.
  mock.serveDirectory(URL(fileURLWithPath: directory, isDirectory: true))
}
if let path = options.bundle {
  do {
    mock.load(try MockBundle(contentsOf: URL(fileURLWithPath: path)))
  } catch {
    fail("cannot read the bundle: \(error)")
  }
}

let server: LoopbackServer
do {
  server = try mock.startServer(
    port: options.port, host: options.host, limits: options.limits, origin: options.origin?.url
  ) { served in emit(withoutOwnSite(served.description)) }
} catch {
  fail("cannot start the server: \(error)")
}

let signalSources = installStopSignals(stopping: server)
emit(server.baseURL.absoluteString)
dispatchMain()
