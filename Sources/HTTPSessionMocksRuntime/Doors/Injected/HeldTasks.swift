/// A manual ``SpySession``'s resumed tasks, waiting for the test to complete them.
///
/// Owned by the spy and known to its core only weakly: a held task holds the core, so the core
/// holding the tasks would make a cycle that a dropped spy could never break.
final class HeldTasks: Sendable {
  private let tasks = Locked<[MockTask]>([])

  /// The held tasks, in resume order.
  var all: [MockTask] { tasks.withLock { $0 } }

  /// Holds `task` if it is still running (a cancel that came first has already delivered).
  func hold(_ task: MockTask) {
    tasks.withLock { tasks in
      if task.state == .running { tasks.append(task) }
    }
  }

  /// Takes `task` out, for the test to complete; `false` if it is not held.
  func take(_ task: MockTask) -> Bool {
    tasks.withLock { tasks in
      guard let index = tasks.firstIndex(where: { $0 === task }) else { return false }
      tasks.remove(at: index)
      return true
    }
  }

  /// Lets go of a cancelled task.
  func release(_ task: MockTask) {
    tasks.withLock { tasks in tasks.removeAll { $0 === task } }
  }
}
