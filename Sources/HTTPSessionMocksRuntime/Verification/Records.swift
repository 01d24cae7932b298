import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a double saw, kept in the session core's state: the call log, the requests sent, what
/// answered them, and the requests no stub matched.
///
/// A test's double keeps everything. The double behind a long-running server is bounded (see
/// ``bound(toLast:bodyBytes:)``): each list keeps only its newest records, and bodies keep a
/// prefix and their size, while the counts go on counting everything.
struct Records {
  private var eventWindow = JournalWindow<SessionEvent>()
  private var requestWindow = JournalWindow<URLRequest>()
  private var exchangeWindow = JournalWindow<Exchange>()
  private var unmatchedWindow = JournalWindow<URLRequest>()
  private var unreportedWindow = JournalWindow<URLRequest>()
  /// The most body bytes a record keeps of a request or a response; `nil`: requests whole,
  /// responses up to ``Exchange/bodyLimit``.
  private(set) var bodyLimit: Int?
  /// The body last cut for the journal, by task and full size, so that the records of one
  /// request (created, sent, completed) share one copy of its prefix.
  private var lastCut: (taskIdentifier: Int, byteCount: Int, prefix: Data)?
  private var nextTaskIdentifier = 0

  var events: [SessionEvent] { eventWindow.elements }
  var requests: [URLRequest] { requestWindow.elements }
  var exchanges: [Exchange] { exchangeWindow.elements }
  var unmatched: [URLRequest] { unmatchedWindow.elements }
  /// Unmatched requests that nothing has reported as a failure yet (answered by a policy).
  var unreportedUnmatched: [URLRequest] { unreportedWindow.elements }

  /// Every request sent, kept or not.
  var sentCount: Int { requestWindow.total }
  /// Every request no stub matched, kept or not.
  var unmatchedCount: Int { unmatchedWindow.total }
  /// The sent requests the journal no longer keeps.
  var droppedRequestCount: Int { requestWindow.dropped }
  /// The most requests and exchanges kept, when the journal is bounded.
  var limit: Int? { requestWindow.limit }

  /// Keeps only the newest `count` requests, exchanges and unmatched requests, and the newest
  /// `4 × count` events (a task's creation, resume, cancellation and completion), and cuts
  /// request and response bodies longer than `bodyBytes`. Records kept already are trimmed to
  /// that window too (their bodies are not cut). A tighter bound than an earlier one wins.
  mutating func bound(toLast count: Int, bodyBytes: Int) {
    let count = max(count, 0)
    let events = count.multipliedReportingOverflow(by: 4)
    eventWindow.bound(to: events.overflow ? Int.max : events.partialValue)
    requestWindow.bound(to: count)
    exchangeWindow.bound(to: count)
    unmatchedWindow.bound(to: count)
    unreportedWindow.bound(to: count)
    bodyLimit = min(bodyLimit ?? Int.max, max(bodyBytes, 0))
  }

  /// Forgets every record, as WireMock's journal reset does: the bounds stay, and task
  /// identifiers go on counting, so that no later record reuses an earlier one's.
  mutating func removeAll() {
    var empty = Records()
    empty.nextTaskIdentifier = nextTaskIdentifier
    if let limit { empty.bound(toLast: limit, bodyBytes: bodyLimit ?? Int.max) }
    self = empty
  }

  // Each record is made in place when nothing is cut (a test's journal, on the hot path of
  // every request), and through ``kept(_:task:)`` only in a
  // bounded journal.

  mutating func recordCreated(_ request: URLRequest, kind: SessionEvent.TaskKind) -> Int {
    nextTaskIdentifier += 1
    let id = nextTaskIdentifier
    guard bodyLimit != nil else {
      eventWindow.append(SessionEvent(kind: .created(kind), taskIdentifier: id, request: request))
      return id
    }
    let kept = kept(request, task: id)
    eventWindow.append(SessionEvent(kind: .created(kind), taskIdentifier: id, request: kept))
    return id
  }

  /// Records a sent request: a resumed task's, or each hop of a redirect the mock follows.
  mutating func recordSent(_ request: URLRequest, taskIdentifier: Int) {
    guard bodyLimit != nil else {
      eventWindow.append(
        SessionEvent(kind: .resumed, taskIdentifier: taskIdentifier, request: request))
      requestWindow.append(request)
      return
    }
    let kept = kept(request, task: taskIdentifier)
    eventWindow.append(SessionEvent(kind: .resumed, taskIdentifier: taskIdentifier, request: kept))
    requestWindow.append(kept)
  }

  mutating func recordCancelled(_ request: URLRequest, taskIdentifier: Int) {
    let kept = bodyLimit == nil ? request : kept(request, task: taskIdentifier)
    eventWindow.append(
      SessionEvent(kind: .cancelled, taskIdentifier: taskIdentifier, request: kept))
  }

  mutating func recordUnmatched(_ request: URLRequest, taskIdentifier: Int, reported: Bool) {
    let kept = bodyLimit == nil ? request : kept(request, task: taskIdentifier)
    unmatchedWindow.append(kept)
    if !reported { unreportedWindow.append(kept) }
  }

  /// Records a redirect hop's answer: an exchange, with no completion event (the task goes on).
  mutating func recordHop(_ exchange: Exchange) {
    guard bodyLimit != nil else { return exchangeWindow.append(exchange) }
    exchangeWindow.append(kept(exchange))
  }

  /// Records a task's completion and the exchange that ended it.
  mutating func recordCompleted(_ exchange: consuming Exchange) {
    guard bodyLimit != nil else { return appendCompleted(exchange) }
    appendCompleted(kept(exchange))
  }

  /// Appends the completion event, then moves the exchange into its list (so that recording
  /// it copies nothing).
  @inline(__always)
  private mutating func appendCompleted(_ exchange: consuming Exchange) {
    let kind = SessionEvent.Kind.completed(
      statusCode: exchange.statusCode,
      error: exchange.error.map(ErrorText.describe))
    eventWindow.append(
      SessionEvent(kind: kind, taskIdentifier: exchange.taskIdentifier, request: exchange.request))
    exchangeWindow.append(exchange)
  }

  // MARK: - Bodies

  /// `exchange` as a bounded journal keeps it: bodies cut at the journal's limit.
  private mutating func kept(_ exchange: Exchange) -> Exchange {
    guard let bodyLimit else { return exchange }
    let request = kept(exchange.request, task: exchange.taskIdentifier)
    let byteCount = exchange.request.httpBody?.count ?? 0
    return exchange.keepingBodies(
      atMost: bodyLimit, request: request, requestBodyByteCount: byteCount)
  }

  /// `request` as the journal keeps it: whole, or, in a bounded journal, with a body longer
  /// than the limit cut to a copy of its prefix (so that the journal does not keep the whole
  /// body alive).
  private mutating func kept(_ request: URLRequest, task: Int) -> URLRequest {
    guard let bodyLimit, let body = request.httpBody, body.count > bodyLimit else {
      return request
    }
    let prefix: Data
    if let cut = lastCut, cut.taskIdentifier == task, cut.byteCount == body.count {
      // A redirect keeps the body or drops it; one task never sends two of the same size.
      prefix = cut.prefix
    } else {
      prefix = Data(body.prefix(bodyLimit))
      lastCut = (task, body.count, prefix)
    }
    var cutRequest = request
    cutRequest.httpBody = prefix
    return cutRequest
  }
}
