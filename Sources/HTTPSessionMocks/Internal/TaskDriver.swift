/// What a double does when one of its tasks is resumed or cancelled.
protocol TaskDriver: AnyObject, Sendable {
  /// Work done in the same critical region that records the resume (it must run no user code):
  /// a mock routes and claims a stub here.
  func planResume(of task: MockTask, in journal: inout RequestJournal.State) -> ResumePlan

  /// Handles the resumed task outside the lock; returns whether it already settled the resume
  /// (see `RequestJournal.State.settleResumed()`), as a synchronous delivery does.
  func taskDidResume(_ task: MockTask, plan: ResumePlan) -> Bool

  /// Handles a cancel outside the lock; `wasRunning` tells whether the task had been resumed.
  func taskDidCancel(_ task: MockTask, wasRunning: Bool)
}

/// What a driver decided about a resumed task while the resume was being recorded.
enum ResumePlan {
  /// Nothing yet: the driver decides outside the lock.
  case undecided
  /// Routing ran: this stub answers, or none (`nil`) does.
  case routed(StubRouter.Claim?)
}
