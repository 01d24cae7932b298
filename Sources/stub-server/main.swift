// `swift run stub-server BUNDLE [--port N] [--host H] [--directory DIR]`: serves a MockBundle
// (a WireMock root, a MockingBird folder, our bundle.json, a HAR file) and optionally a folder of
// static files on the loopback interface, with no Swift written, and WireMock's admin API under
// /__admin. Prints the base URL as the first line of
// standard output, then one line per request; stops on SIGINT or SIGTERM (and, with
// --exit-with-parent, when its parent ends). Exits 0 when stopped so, 2 for bad arguments, an
// unreadable bundle or a server that cannot start.

import Dispatch
import Foundation
import HTTPSessionMocksRuntime
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
                     [--unmatched 404 | --unmatched passthrough URL] [--exit-with-parent]
                     [--journal N] [--no-admin] [--skip-unreadable]
         stub-server --root-dir DIR [--port N] [--bind-address H] [--verbose]
                     [--no-request-journal | --max-request-journal-entries N]
                     [--global-response-templating | --local-response-templating]
         stub-server --directory DIR [--port N] [--host H] [--journal N]

  Serves the stubs of BUNDLE over HTTP on the loopback interface: a WireMock root (a
  folder holding mappings/ and __files/), a folder holding bundle.json (ours or a
  MockingBird Mock-Bundle), a bundle .json file or a .har file. WireMock's admin API
  answers under /__admin (GET /__admin/requests, POST /__admin/mappings, POST
  /__admin/requests/wait, POST /__admin/shutdown, ...) unless --no-admin is given.

  Options:
    --port N         the TCP port (default 0: the system picks a free one)
    --host H         a loopback address: 127.0.0.1 (default), another 127.x.y.z, ::1 or
                     localhost
    --origin URL     answer each request as if it had been sent to URL's scheme, host and
                     port, such as https://api.github.com, so that stubs recorded with
                     absolute URLs (HAR files, MockingBird's ://host/path) match
    --directory DIR  also serve the files under DIR at / (the bundle's stubs win where
                     they match)
    --unmatched 404  answer a request that no stub matches with a plain 404, without the
                     report (by default the client gets 404 with the report as its body,
                     and the report goes to standard error too)
    --unmatched passthrough URL
                     send a request that no stub matches on to URL's scheme, host and
                     port, such as http://127.0.0.1:8080, and answer what it answers
    --exit-with-parent
                     stop when the process that started this one ends: when standard
                     input reaches its end (the parent holds it open and never writes),
                     and on Linux when the parent process dies
    --journal N      keep the newest N requests in memory (default 10000; 0 for none), so
                     that a long-running server keeps bounded memory
    --no-admin       do not answer the admin API: requests under /__admin go to the stubs
    --skip-unreadable
                     serve a WireMock root even when some of its mapping files cannot be
                     read: each is named on standard error (the file, the JSON path and
                     what is wrong) and left out. Without it such a root is refused

  WireMock's own flags, so that a script that starts WireMock can start this instead:
    --root-dir DIR   the WireMock root to serve (the same as naming it as BUNDLE); the
                     admin API's POST /__admin/mappings/save writes its mappings/ there.
                     As WireMock does, a GET that no mapping matches gets the file of
                     the same path under __files/, when there is one
    --bind-address H the same as --host: a loopback address only
    --no-request-journal
                     keep no requests (the same as --journal 0)
    --max-request-journal-entries N
                     the same as --journal N
    --global-response-templating
                     read every response as a Handlebars template (those added later
                     through the admin API too), as WireMock does with
                     this flag (without it, mappings with "transformers":
                     ["response-template"] are templated, as in WireMock 3)
    --local-response-templating
                     accepted: mappings that name the transformer are always templated
    --verbose        accepted; every request is logged to standard output anyway
    -h, --help       show this help

  The first line of standard output is the server's base URL, such as
  http://127.0.0.1:54321; then one line per request: method, path, status and the stub
  that answered, or "unmatched" with the closest stub and what differed (the full report
  goes to standard error). The lines are written by a thread of their own, so that a slow
  reader never holds a connection. SIGINT (Ctrl-C) or SIGTERM stops the server.

  """

/// Standard output: the base URL, then one line per request.
let log = LineWriter()

/// Writes `message` to standard error and exits with status 2.
func fail(_ message: String, showingUsage: Bool = false) -> Never {
  FileHandle.standardError.write(
    Data(("stub-server: \(message)\n" + (showingUsage ? "\n" + usage : "")).utf8))
  exit(2)
}

/// Stops the server and exits 0 on SIGINT and SIGTERM: the signals are ignored as signals and
/// handled as events of Dispatch signal sources, on a queue of their own. Returns once both
/// sources are registered, so that a signal sent as soon as the base URL is read is not lost.
/// (Not top-level code: its closures must not be isolated to the main actor, as they run on
/// the sources' queue.)
func installStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
  let queue = DispatchQueue(label: "stub-server.signals")
  let registered = DispatchGroup()
  var sources: [any DispatchSourceSignal] = []
  for number in [SIGINT, SIGTERM] {
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
    registered.enter()
    source.setRegistrationHandler { registered.leave() }
    source.setEventHandler { stop() }
    source.resume()
    sources.append(source)
  }
  registered.wait()
  return sources
}

/// What to do with a request that no stub matches.
enum Unmatched {
  /// 404 with the near-miss report as its body; the report on standard error too.
  case report
  /// A plain 404, no report.
  case notFound
  /// Sent on to this origin.
  case passthrough(URLComponents)
}

struct Options {
  var bundle: String?
  var port = 0
  var host = "127.0.0.1"
  var directory: String?
  var origin: URLComponents?
  var limits = ServerLimits()
  var unmatched = Unmatched.report
  var exitWithParent = false
  var admin = true
  var journalDisabled = false
  /// Whether the bundle was named with `--root-dir` (a WireMock root).
  var rootDirectory = false
  /// Whether a WireMock root's unreadable mapping files are named and left out
  /// (`--skip-unreadable`) rather than refusing the root.
  var skipUnreadable = false
  /// `--global-response-templating`: every response is a template.
  var globalTemplating = false
}

/// `text` as an origin: an http or https URL with a host and no path beyond `/`, no query.
func origin(_ text: String) -> URLComponents? {
  guard let parts = URLComponents(string: text),
    ["http", "https"].contains(parts.scheme?.lowercased() ?? ""),
    let host = parts.host, !host.isEmpty, parts.path.isEmpty || parts.path == "/",
    parts.query == nil
  else { return nil }
  return parts
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
    case "--host", "--bind-address":
      options.host = value(of: name, inline: inline)
    case "--no-admin":
      options.admin = false
    case "--verbose", "--local-response-templating":
      break
    case "--global-response-templating":
      options.globalTemplating = true
    case "--no-request-journal":
      options.limits.maxJournalExchanges = 0
      options.journalDisabled = true
    case "--root-dir":
      let path = value(of: name, inline: inline)
      if let bundle = options.bundle {
        fail("one BUNDLE only (got \(bundle) and --root-dir \(path))", showingUsage: true)
      }
      options.bundle = path
      options.rootDirectory = true
    case "--origin":
      let text = value(of: name, inline: inline)
      guard let parts = origin(text) else {
        fail("--origin expects a URL such as https://api.github.com, got \"\(text)\"")
      }
      options.origin = parts
    case "--unmatched":
      switch value(of: name, inline: inline) {
      case "404":
        options.unmatched = .notFound
      case "passthrough":
        guard let text = rest.popFirst() else {
          fail("--unmatched passthrough needs a URL, such as http://127.0.0.1:8080")
        }
        guard let parts = origin(text) else {
          fail(
            "--unmatched passthrough expects a URL such as http://127.0.0.1:8080, got \"\(text)\"")
        }
        options.unmatched = .passthrough(parts)
      case let other:
        fail("--unmatched expects 404 or passthrough URL, got \"\(other)\"", showingUsage: true)
      }
    case "--exit-with-parent":
      options.exitWithParent = true
    case "--skip-unreadable":
      options.skipUnreadable = true
    case "--directory":
      options.directory = value(of: name, inline: inline)
    case "--journal", "--max-request-journal-entries":
      let text = value(of: name, inline: inline)
      guard let count = Int(text), count >= 0 else {
        fail("\(name) expects a number of requests, 0 or more, got \"\(text)\"")
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
var bundle: MockBundle?
/// The WireMock root served, when BUNDLE (or `--root-dir`) is one: with the admin API, its
/// mappings are the admin API's, listed with their ids, and saved back there.
var wireMockRoot: URL?
/// The root's mappings, when the admin API adds them (instead of loading the bundle).
var rootMappings: [WireMockMapping] = []
if let path = options.bundle {
  let url = URL(fileURLWithPath: path, isDirectory: true)
  var isDirectory: ObjCBool = false
  if options.rootDirectory,
    !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
      || !isDirectory.boolValue
  {
    // A mistyped root would otherwise start an empty server that answers every request with
    // a report.
    fail("--root-dir \(path): no such folder")
  }
  let isBundleFolder = FileManager.default.fileExists(
    atPath: url.appendingPathComponent("bundle.json").path)
  if options.rootDirectory || (WireMockMapping.isRoot(url) && !isBundleFolder) {
    wireMockRoot = url
  }
  if options.skipUnreadable && wireMockRoot == nil {
    fail("--skip-unreadable applies to a WireMock root (a folder holding mappings/)")
  }
  do {
    if let root = wireMockRoot, options.skipUnreadable, WireMockMapping.isRoot(root) {
      let (mappings, skipped) = try WireMockMapping.readableMappings(inRoot: root)
      for error in skipped {
        FileHandle.standardError.write(
          Data("stub-server: warning: skipped (--skip-unreadable): \(error)\n".utf8))
      }
      if options.admin {
        rootMappings = mappings
      } else {
        bundle = MockBundle(wireMockMappings: mappings)
      }
    } else if let root = wireMockRoot, options.admin {
      // A root without mappings/ yet is an empty one, as WireMock takes it.
      rootMappings = WireMockMapping.isRoot(root) ? try WireMockMapping.mappings(inRoot: root) : []
    } else if options.rootDirectory && !WireMockMapping.isRoot(url) {
      bundle = MockBundle()
    } else {
      bundle = try MockBundle(contentsOf: URL(fileURLWithPath: path))
    }
  } catch {
    let hint =
      wireMockRoot == nil
      ? "" : " (to serve the root's other mappings, leaving this file out, add --skip-unreadable)"
    fail("cannot read the bundle: \(error)\(hint)")
  }
  if options.globalTemplating {
    // The admin API templates the root's mappings and those added later
    // (AdminSettings.templatesEveryResponse).
    bundle = bundle?.templatingEveryResponse()
  }
  // Loaded, but not as WireMock would answer: the mock says so once per mapping as it loads
  // it (a warning on standard error), never refusing the root.
}

// The mock speaks to a command-line user: it names the bundle's file and entries, never this
// file's lines, and suggests flags, not properties. Delays run in real time, as they should
// here, so the mock has a real clock rather than no clock.
var voice = ReportVoice(speaker: "stub-server", citesStubSites: false)
let change =
  options.bundle.map { "add or change an entry in \($0)" }
  ?? options.directory.map { "add the file under \($0)" } ?? "add a stub"
voice.unmatchedAdvice =
  "Fix the request, or \(change). To answer unmatched requests without this report, start "
  + "stub-server with --unmatched 404 (a plain 404) or --unmatched passthrough URL (send "
  + "them on to URL)."
if let path = options.bundle {
  let kind = path.lowercased().hasSuffix(".har") ? "recording" : "bundle"
  voice.emptyNote = "The \(kind) \(path) has no entries."
}
let mock = URLSessionMock(clock: ContinuousClock(), voice: voice)
switch options.unmatched {
case .report: break
case .notFound: mock.unmatchedRequestPolicy = .respond(with: .status(404))
case .passthrough(let origin):
  mock.unmatchedRequestPolicy = .passThrough(to: Upstream(origin: origin))
}
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
if let root = wireMockRoot,
  FileManager.default.fileExists(atPath: root.appendingPathComponent("__files").path)
{
  // WireMock serves the files of __files/ to a GET that no mapping matches; so does this.
  mock.serveWireMockFiles(of: root)
}
if let bundle { mock.load(bundle) }

/// The log line of `served`: as the server describes it, and for a request that no stub
/// matched but the `--unmatched` policy answered, which policy did.
func logLine(_ served: ServedRequest) -> String {
  let policy: String
  switch options.unmatched {
  case .report: return served.description
  case .notFound: policy = "--unmatched 404"
  case .passthrough(let origin): policy = "passed through to \(origin.string ?? "")"
  }
  let head = "\(served.method) \(served.target)"
  switch served.outcome {
  case .answered(let status, nil):
    return "\(head) \(status.map(String.init) ?? "-") unmatched (\(policy))"
  case .failed(let error, nil):
    return "\(head) failed \(error) unmatched (\(policy))"
  default:
    return served.description
  }
}

let server: LoopbackServer
do {
  let admin =
    options.admin
    ? AdminSettings(
      rootDirectory: wireMockRoot, mappings: rootMappings, onShutdown: { stopAndExit() },
      requestJournalDisabled: options.journalDisabled,
      templatesEveryResponse: options.globalTemplating)
    : nil
  server = try mock.startServer(
    port: options.port, host: options.host, limits: options.limits, origin: options.origin?.url,
    admin: admin
  ) { served in log.append(logLine(served)) }
} catch let error as ServerError where error.errorNumber == EADDRINUSE {
  fail(
    "cannot start the server: port \(options.port) on \(options.host) is in use by another "
      + "process; pass --port 0 to let the system pick a free one")
} catch {
  fail("cannot start the server: \(error)")
}

/// Held by the first caller of `stopAndExit` until the process ends: a signal and the end of
/// standard input may ask at once, and `exit` must run once.
let exiting = NSLock()

/// Stops the server, writes what the log still holds, and exits 0.
@Sendable func stopAndExit() {
  exiting.lock()
  server.stop()
  log.flush()
  exit(0)
}

let signalSources = installStopSignals(stopAndExit)
let parentSources = options.exitWithParent ? watchParent(stopAndExit) : []
log.append(server.baseURL.absoluteString)
dispatchMain()
