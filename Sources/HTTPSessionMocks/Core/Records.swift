import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a double saw, kept in the session core's state: the call log, the requests sent, what
/// answered them, and the requests no stub matched.
struct Records {
  var events: [SessionEvent] = []
  var requests: [URLRequest] = []
  var exchanges: [Exchange] = []
  var unmatched: [URLRequest] = []
  /// Unmatched requests that nothing has reported as a failure yet (answered by a policy).
  var unreportedUnmatched: [URLRequest] = []
  private var nextTaskIdentifier = 0

  mutating func recordCreated(_ request: URLRequest, kind: SessionEvent.TaskKind) -> Int {
    nextTaskIdentifier += 1
    events.append(
      SessionEvent(kind: .created(kind), taskIdentifier: nextTaskIdentifier, request: request))
    return nextTaskIdentifier
  }

  /// Records a sent request: a resumed task's, or each hop of a redirect the mock follows.
  mutating func recordSent(_ request: URLRequest, taskIdentifier: Int) {
    events.append(SessionEvent(kind: .resumed, taskIdentifier: taskIdentifier, request: request))
    requests.append(request)
  }

  mutating func recordCancelled(_ request: URLRequest, taskIdentifier: Int) {
    events.append(
      SessionEvent(kind: .cancelled, taskIdentifier: taskIdentifier, request: request))
  }

  mutating func recordUnmatched(_ request: URLRequest, reported: Bool) {
    unmatched.append(request)
    if !reported { unreportedUnmatched.append(request) }
  }

  /// Records a redirect hop's answer: an exchange, with no completion event (the task goes on).
  mutating func recordHop(_ exchange: Exchange) {
    exchanges.append(exchange)
  }

  /// Records a task's completion and the exchange that ended it.
  mutating func recordCompleted(_ exchange: Exchange) {
    exchanges.append(exchange)
    let kind = SessionEvent.Kind.completed(
      statusCode: exchange.statusCode,
      error: exchange.error.map(ErrorText.describe))
    events.append(
      SessionEvent(kind: kind, taskIdentifier: exchange.taskIdentifier, request: exchange.request))
  }
}
