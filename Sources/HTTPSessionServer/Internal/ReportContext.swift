import Foundation
import HTTPSessionMocksRuntime

/// Which test, and which `withKnownIssue` scope, the server's reports belong to.
///
/// Requests reach the server on its own threads, from clients the test cannot hand a task-local
/// value: another process, a browser, a plain `URLSession`. Swift Testing attributes an issue
/// through the task-local values of the task that records it, so a report made on a connection
/// thread would belong to no test. The server therefore keeps a ``TestContextRelay`` captured on
/// the test's own task, and a report the mock makes while it handles a request is recorded on
/// that relay, before the connection writes the answer. The relay is captured when the server
/// starts, and anew each time the test calls ``LoopbackServer/reportToCurrentTest()``, which
/// reading the server's address does: that is what a test does just before it points a client
/// at the server, inside a `withKnownIssue` scope when it expects a report.
///
/// Each relay runs on a thread of its own, so that a test blocking the cooperative pool does
/// not hold reports up; a replaced relay (and its thread) ends once no connection uses it.
///
/// Outside a test (the `stub-server` command, an app, a benchmark) nothing is captured, and
/// reports are made on the connection's thread.
final class ReportContext: Sendable {
  private struct State {
    var relay: TestContextRelay?
    var closed = false
  }
  private let state = Locked(State())

  init() {}

  /// Captures the current task's test context, if it runs in a test; otherwise keeps the one
  /// captured before.
  func refresh() {
    guard let fresh = TestContextRelay.captureIfInTest(onThreadOfItsOwn: true) else { return }
    // The relay replaced is not closed here: a connection may be about to record on it. Its
    // task ends when the last reference to it goes.
    state.withLock { state in
      if !state.closed { state.relay = fresh }
    }
  }

  /// The relay reports are recorded on, or `nil` to record them where they are made.
  var current: TestContextRelay? { state.withLock { $0.relay } }

  /// Captures nothing more and lets go of the relay: its task (and thread) ends once no
  /// connection still records on it. (Not closed here: `stop()` may run on a connection thread,
  /// from a stub's closure, while that connection still records on the relay.)
  func close() {
    state.withLock { state in
      state.closed = true
      state.relay = nil
    }
  }
}
