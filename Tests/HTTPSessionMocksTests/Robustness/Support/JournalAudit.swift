import HTTPSessionMocks

/// Checks a journal's call log task by task: every task was created once, completed once and
/// last, resumed and cancelled at most once, and its completion fits what happened to it.
enum JournalAudit {
  typealias History = [SessionEvent.Kind]

  /// Each task's events in order, by task identifier.
  static func histories(_ events: [SessionEvent]) -> [Int: History] {
    var histories: [Int: History] = [:]
    for event in events { histories[event.taskIdentifier, default: []].append(event.kind) }
    return histories
  }

  static func describe(_ kind: SessionEvent.Kind) -> String {
    switch kind {
    case .created(let taskKind): return "created \(taskKind.rawValue)"
    case .resumed: return "resumed"
    case .cancelled: return "cancelled"
    case .completed(let status, let error):
      return "completed " + (error ?? status.map(String.init) ?? "nil")
    }
  }

  static func isCancellation(_ kind: SessionEvent.Kind) -> Bool {
    if case .completed(_, let error?) = kind { return error.hasPrefix("URLError(.cancelled)") }
    return false
  }

  static func statusCode(_ kind: SessionEvent.Kind) -> Int? {
    if case .completed(let status, nil) = kind { return status }
    return nil
  }

  /// What is wrong with each task's history, one line per task.
  ///
  /// With `cancelMustWin`, a task that recorded a cancellation must complete with
  /// `URLError(.cancelled)`; a spy that forwards leaves that to the wrapped session, which may
  /// already be delivering its answer.
  static func problems(in events: [SessionEvent], cancelMustWin: Bool) -> [String] {
    var found: [String] = []
    for (identifier, history) in histories(events).sorted(by: { $0.key < $1.key }) {
      if let problem = problem(with: history, cancelMustWin: cancelMustWin) {
        let events = history.map(describe).joined(separator: ", ")
        found.append("#\(identifier) [\(events)]: \(problem)")
      }
    }
    return found
  }

  private static func problem(with history: History, cancelMustWin: Bool) -> String? {
    guard case .created = history.first else { return "does not start with its creation" }
    let rest = Array(history.dropFirst())
    guard let last = rest.last, case .completed = last else { return "never completed" }
    let middle = rest.dropLast()
    if rest.dropLast().contains(where: { if case .completed = $0 { true } else { false } }) {
      return "completed more than once"
    }
    switch Array(middle) {
    case [.resumed]:
      if isCancellation(last) { return "cancelled without a cancel" }
    case [.resumed, .cancelled]:
      if cancelMustWin && !isCancellation(last) {
        return "cancelled while running, but the answer was delivered"
      }
    case [.cancelled]:
      if !isCancellation(last) { return "cancelled before resume, but not delivered a cancel" }
    default:
      return "unexpected events before completion"
    }
    return nil
  }
}
