import Foundation

/// Carries a test's task-local context to work that a door runs on another thread.
///
/// Swift Testing attributes an issue, and matches it against `withKnownIssue`, through task-local
/// values of the task that records it. A door whose requests arrive on threads of its own (the
/// URLProtocol bridge: URL loading calls `startLoading()` on its work queue) would record its
/// reports (an unmatched request) outside the test, where no `withKnownIssue` can see them. But
/// such a door often has one moment on the test's own task: corelibs and Apple's URL loading make
/// the protocol object synchronously inside `resume()`. Capturing a relay there makes an
/// unstructured task, which inherits the test's task-local values (the current test, an open
/// `withKnownIssue` scope, the package's own report capture); the door hands the request's work
/// to it, so reports made during that work are recorded as if the test had made them.
///
/// Outside a test (a benchmark, an app under UI test), ``captureIfInTest()`` returns `nil` and the
/// door runs its work directly: no task is made.
package final class TestContextRelay: Sendable {
  private let outlet: AsyncStream<@Sendable () -> Void>.Continuation

  /// A relay for the current task's test context, or `nil` when the current task is not part of
  /// a test (nor of a report capture scope).
  ///
  /// - Parameter onThreadOfItsOwn: Whether the relay's task runs on a thread of its own rather
  ///   than on Swift's cooperative pool, so that its jobs run even while every thread of the
  ///   pool is blocked (a synchronous test waiting on a socket). The thread ends with the
  ///   relay. Before macOS 15 / iOS 18 (no task executors) the pool is used either way.
  package static func captureIfInTest(onThreadOfItsOwn: Bool = false) -> TestContextRelay? {
    guard isInTest else { return nil }
    return TestContextRelay(onThreadOfItsOwn: onThreadOfItsOwn)
  }

  /// Whether the current task runs inside a test or a report capture scope.
  static var isInTest: Bool {
    ReportCapture.current != nil || TestFrameworkLink.hooks?.isRunningSwiftTestingTest == true
  }

  private init(onThreadOfItsOwn: Bool) {
    let (jobs, outlet) = AsyncStream.makeStream(of: (@Sendable () -> Void).self)
    self.outlet = outlet
    // An unstructured task (not a detached one): it inherits the current task's task-local
    // values, which is the point of the relay. It ends when the stream finishes.
    if onThreadOfItsOwn, #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    {
      let thread = RelayThread()
      Task(executorPreference: thread) {
        for await job in jobs { job() }
        thread.end()
      }
    } else {
      Task {
        for await job in jobs { job() }
      }
    }
  }

  /// Runs `job` inside the captured context, soon, on the relay's task; jobs run one at a time,
  /// in the order given.
  /// Once the relay is closed, `job` runs at once on the caller's thread instead.
  package func run(_ job: @escaping @Sendable () -> Void) {
    if case .terminated = outlet.yield(job) { job() }
  }

  /// Runs `job` on the relay like ``run(_:)`` and waits until it has run, or until `timeout` of
  /// real time has passed (a relay on the cooperative pool may not get a thread while the test
  /// blocks every one of the pool's; the job then still runs, later). Returns whether it ran
  /// in time.
  ///
  /// Never call it from the relay's own task: the job would wait for itself.
  @discardableResult
  package func runAndWait(
    timeout: Duration = .seconds(5), _ job: @escaping @Sendable () -> Void
  ) -> Bool {
    // A semaphore: the caller's thread waits, with a timeout, for a job on another thread.
    let done = DispatchSemaphore(value: 0)
    run {
      job()
      done.signal()
    }
    let (seconds, attoseconds) = timeout.components
    let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    return done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success
  }

  /// Ends the relay's task once the jobs given so far have run.
  package func close() {
    outlet.finish()
  }

  deinit {
    outlet.finish()
  }
}

/// Runs `body` so that each report a double makes on this thread, inside it, is recorded on
/// `relay` (in the test context it captured), and waits for each to be recorded before going
/// on. With a `nil` relay it just runs `body`.
///
/// A door whose work runs on threads of its own (the loopback server's connections) wraps each
/// request's call into the mock in this, so that an unmatched request fails the test that
/// expects it, inside its `withKnownIssue`, before the client sees the answer.
package func withReports<R>(relayedThrough relay: TestContextRelay?, _ body: () -> R) -> R {
  guard let relay else { return body() }
  return TestContextRelay.$diversion.withValue(relay) { body() }
}

/// A task executor with one thread of its own, for work that must not wait for the cooperative
/// pool: a relay's jobs, the loopback server's admin API waits. The task that runs on it ends it
/// as its last step; the thread then leaves its loop.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
package final class RelayThread: TaskExecutor, @unchecked Sendable {
  // @unchecked Sendable: `jobs` and `ended` are only read and written with `condition` locked.
  /// A condition, not only a lock: the relay's thread sleeps on it until a job comes.
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var ended = false

  /// Starts the thread.
  package init() {
    // The thread holds the executor until the relay's task ends it.
    let thread = Thread { [self] in
      while let job = next() { job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
    thread.name = "HTTPSessionKit test-context relay"
    thread.start()
  }

  /// Runs `job` on the thread, after the jobs queued before it.
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let queued = condition.withLock { () -> Bool in
      guard !ended else { return false }
      jobs.append(job)
      condition.signal()
      return true
    }
    // After the end (the task's last step has run) nothing of the task is left to come; should
    // a job come anyway, it runs here rather than never.
    if !queued { job.runSynchronously(on: asUnownedTaskExecutor()) }
  }

  /// Lets the thread leave its loop once the jobs queued so far have run.
  package func end() {
    condition.withLock {
      ended = true
      condition.signal()
    }
  }

  private func next() -> UnownedJob? {
    condition.withLock {
      while jobs.isEmpty && !ended { condition.wait() }
      return jobs.isEmpty ? nil : jobs.removeFirst()
    }
  }
}

extension TestContextRelay {
  /// The relay that reports made on the current thread are recorded on
  /// (`withReports(relayedThrough:_:)`).
  @TaskLocal static var diversion: TestContextRelay?
}
