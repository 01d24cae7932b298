import Foundation
import TestSupport
import Testing

/// The `python3` that imports Python's `websockets` package (the real WebSocket client of
/// these tests): the first on `PATH` that does, else a system one; checked once. A test that
/// needs it is skipped, with a one-line note, when there is none.
let pythonWithWebSockets: String? = {
  let directories =
    (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    + ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"]
  for directory in directories {
    let python = "\(directory)/python3"
    guard FileManager.default.isExecutableFile(atPath: python) else { continue }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = ["-c", "import websockets.sync.client"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { continue }
    process.waitUntilExit()
    if process.terminationStatus == 0 { return python }
  }
  return nil
}()

/// Whether a `python3` with `websockets` is installed.
let pythonWebSocketsAvailable = pythonWithWebSockets != nil

/// The note a test skipped for want of Python's `websockets` shows.
let pythonWebSocketsMissing: Comment =
  "Python's websockets is not installed (pip install websockets); WebSocket client tests skipped"

/// What every client script starts with: `url` (the first argument) and `closed(ws)`, which
/// waits for the server's close and prints `closed CODE REASON`.
///
/// The clients wait up to 600 s (`recv(timeout=600)` in every script), longer than any bound on
/// the test's side: a test slowed by a loaded machine (the thread sanitizer, every suite at once
/// on two cores) must never be outwaited by its client, or the client closes first and the test
/// fails for a reason that is not its own. The test gives up first, and says where.
private let prelude = """
  import sys
  from websockets.sync.client import connect
  from websockets.exceptions import ConnectionClosed, InvalidStatus
  url = sys.argv[1]
  def closed(ws):
      try:
          message = ws.recv(timeout=600)
          print("unexpected", repr(message))
      except ConnectionClosed:
          print("closed", ws.close_code, ws.close_reason)
      except TimeoutError:
          print("no close within 600 s")

  """

/// Starts Python's `websockets` client on `script` (after the prelude) against `url`, its
/// output unbuffered, so that a test can read it line by line as it comes.
func startWebSocketClient(_ script: String, _ url: URL) throws -> ChildProcess {
  let python = pythonWithWebSockets ?? "/usr/bin/python3"
  return try ChildProcess(
    URL(fileURLWithPath: python), ["-u", "-c", prelude + script, url.absoluteString],
    environment: ProcessInfo.processInfo.environment)
}

/// Runs Python's `websockets` client on `script` against `url` to its end (at most 300 s);
/// returns its standard output, and its standard error after a `stderr:` line when it wrote
/// any (a traceback names what went wrong).
func runWebSocketClient(_ script: String, _ url: URL) async throws -> String {
  let child = try startWebSocketClient(script, url)
  defer { child.stop() }
  _ = await child.exit(timeout: 300)
  let errors = child.errorText
  return child.outputText + (errors.isEmpty ? "" : "stderr:\n" + errors)
}
