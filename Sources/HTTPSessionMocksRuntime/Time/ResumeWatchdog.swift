/// How long a `receive()`, `send(_:)` or ping may wait on a mock WebSocket task that was never
/// resumed before it fails with a report naming the fix, and the real time that measures it.
///
/// A WebSocket task connects only once `resume()` is called; a test whose code forgot the call
/// would wait on `receive()` forever. As `waitForRequests(count:timeout:)` does for a data task,
/// the task's watchdog ends that wait after 5 s of real time: the test hears what happened and
/// what to do, and each waiting call throws `URLError(.timedOut)`. The watchdog runs only while
/// something waits on a suspended task; `resume()` ends it.
struct ResumeWatchdog: Sendable {
  /// The real time a call may wait on a task never resumed; `nil` turns the check off.
  var timeout: Duration? = .seconds(5)
  /// Real time as the watchdog sees it (tests inject a `VirtualClock` to move it).
  var realTime = StallWatchdog.TimeSource(ContinuousClock())

  /// What waited, and for how long, when the watchdog fired.
  struct Waiting {
    var receives = 0
    var sends = 0
    var pings = 0

    var isEmpty: Bool { receives == 0 && sends == 0 && pings == 0 }
  }

  /// The report: what waited, the likely cause, and the fix.
  static func report(_ waiting: Waiting, task summary: String, after timeout: Duration) -> String {
    var calls: [String] = []
    if waiting.receives > 0 { calls.append(counted(waiting.receives, "receive()")) }
    if waiting.sends > 0 { calls.append(counted(waiting.sends, "send(_:)")) }
    if waiting.pings > 0 { calls.append(counted(waiting.pings, "sendPing(pongReceiveHandler:)")) }
    let total = waiting.receives + waiting.sends + waiting.pings
    return
      "\(calls.joined(separator: " and ")) waited \(timeout) of real time on the WebSocket "
      + "task for \(summary), which was never resumed: a WebSocket task connects only once "
      + "resume() is called, so nothing can arrive and nothing is sent. Did the code under "
      + "test forget to call resume()? Call resume() on the task that webSocket(with:) "
      + "returns. So that the test can finish, "
      + (total == 1 ? "the call fails" : "the calls fail") + " with URLError(.timedOut)."
  }

  private static func counted(_ count: Int, _ call: String) -> String {
    count == 1 ? "1 call of \(call)" : "\(count) calls of \(call)"
  }
}
