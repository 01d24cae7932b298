import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Random sequences of task operations, run on the doubles and on ``LifecycleModel`` side by
/// side; after every operation each task's state, what its handler received, how many times it
/// ran, the order of deliveries, the clock, the spies' pending tasks, every journal and the
/// stub's call count must agree.
///
/// The sequences are drawn from a fixed seed, so every run checks the same ones. To check
/// others, or to replay one that failed (the failure prints the command):
///
///     MODEL_SEED=0x1234 MODEL_SEQUENCES=50000 swift test --filter ModelTests
@Suite struct ModelTests {
  static let defaultSeed: UInt64 = 0x5EED_2024_0000_0001
  static let defaultSequences = 10_000
  static let shards = 4

  static var baseSeed: UInt64 {
    guard let text = ProcessInfo.processInfo.environment["MODEL_SEED"] else { return defaultSeed }
    let lowered = text.lowercased()
    if lowered.hasPrefix("0x") { return UInt64(lowered.dropFirst(2), radix: 16) ?? defaultSeed }
    return UInt64(lowered) ?? defaultSeed
  }

  static var sequenceCount: Int {
    ProcessInfo.processInfo.environment["MODEL_SEQUENCES"].flatMap { Int($0) } ?? defaultSequences
  }

  @Test(arguments: 0..<shards)
  func randomSequencesMatchTheModel(shard: Int) async {
    let base = Self.baseSeed
    let total = Self.sequenceCount
    var checked = 0
    for number in stride(from: shard, to: total, by: Self.shards) {
      let seed = base &+ UInt64(number)
      let harness = LifecycleHarness()
      var random = SplitMix64(seed: seed)
      let length = random.int(in: 5...30)
      for _ in 0..<length {
        let op = LifecycleHarness.nextOperation(&random, harness.model)
        await harness.apply(op)
        let differences = harness.differences()
        if !differences.isEmpty {
          Issue.record(
            Comment(rawValue: harness.report(sequence: number, seed: seed, differences)))
          return
        }
      }
      checked += 1
    }
    // Every sequence of this shard ran to its end and agreed with the model.
    #expect(checked == (total - shard + Self.shards - 1) / Self.shards)
  }

  @Test func tiesAreDeliveredInTheOrderTheyWereScheduled() async {
    let harness = LifecycleHarness()
    let ops: [LifecycleOperation] = [
      .create(.mock, delay: 1000), .create(.mock, delay: 1000), .create(.forwardingSpy, delay: 500),
      .resume(1), .resume(0), .advance(500), .resume(2), .advance(499), .advance(1),
    ]
    for op in ops { await harness.apply(op) }
    // t1 and t0 are due at 1 s, scheduled in that order; t2 is due at 1 s too, scheduled last.
    #expect(harness.model.deliveryOrder == [1, 0, 2])
    #expect(harness.differences() == [])
  }

  @Test func aCancelledForwardedTaskStaysCancelingUntilTheWrappedSessionAnswers() async {
    // t0 was resumed, so the wrapped session decides when its cancel ends; t1 never was, so
    // the spy ends it at once.
    let harness = LifecycleHarness()
    let ops: [LifecycleOperation] = [
      .create(.heldSpy, delay: nil), .create(.heldSpy, delay: nil), .resume(0), .cancel(0),
      .resume(0), .cancel(0), .cancel(1), .resume(1),
    ]
    for op in ops { await harness.apply(op) }
    #expect(harness.model.tasks.map(\.state) == [.canceling, .completed])
    #expect(harness.differences() == [])
    await harness.apply(.settle)
    #expect(harness.model.tasks.map(\.outcome) == [.failure(.cancelled), .failure(.cancelled)])
    #expect(harness.model.tasks.map(\.deliveries) == [1, 1])
    #expect(harness.differences() == [])
  }

  @Test func completingATaskThatIsNotPendingIsReportedAndChangesNothing() async {
    let harness = LifecycleHarness()
    let ops: [LifecycleOperation] = [
      .create(.manualSpy, delay: nil), .complete(0, succeeds: true, viaManualSpy: true),
      .resume(0), .complete(0, succeeds: false, viaManualSpy: false),
      .complete(0, succeeds: true, viaManualSpy: true),
      .complete(0, succeeds: true, viaManualSpy: true),
    ]
    for op in ops { await harness.apply(op) }
    #expect(harness.model.tasks[0].outcome == .success(status: 201, body: "m0"))
    #expect(harness.differences() == [])
  }

  @Test func theHarnessNoticesWhenTheDoublesLeaveTheModel() async {
    let harness = LifecycleHarness()
    for op: LifecycleOperation in [.create(.mock, delay: 500), .create(.manualSpy, delay: nil)] {
      await harness.apply(op)
    }
    #expect(harness.differences() == [])
    // Behind the model's back: the mock task is resumed and the clock runs it.
    harness.tasks[0].resume()
    await harness.clock.advance(by: .seconds(1))
    let differences = harness.differences()
    #expect(differences.contains { $0.contains("t0: state completed, model: suspended") })
    #expect(differences.contains { $0.contains("delivery order") })
    #expect(differences.contains { $0.contains("mock journal") })
    let report = harness.report(sequence: 7, seed: 0xABC, differences)
    #expect(report.contains("MODEL_SEED=0xabc MODEL_SEQUENCES=1"))
    #expect(report.contains("create t0 on mock, delay 500 ms"))
  }
}

// MARK: - The model

/// One step of a random sequence. Tasks are named by creation order: `t0`, `t1`…
enum LifecycleOperation: Equatable, CustomStringConvertible {
  /// Creates a task on a session; for the mock (and the spy that forwards to it) the stub
  /// answers after `delay` milliseconds of virtual time, or at once when it is `nil`.
  case create(LifecycleModel.Session, delay: Int?)
  case resume(Int)
  case cancel(Int)
  /// `VirtualClock.advance(by:)`, in milliseconds (negative does nothing).
  case advance(Int)
  /// `VirtualClock.run()`.
  case runClock
  /// `SpySession.complete(_:with:)`, on the manual spy or (always refused) the forwarding one.
  case complete(Int, succeeds: Bool, viaManualSpy: Bool)
  /// The session behind the "held" spy answers everything it holds.
  case settle

  var description: String {
    switch self {
    case .create(let session, let delay):
      return "create on \(session)" + (delay.map { ", delay \($0) ms" } ?? ", no delay")
    case .resume(let task): return "resume t\(task)"
    case .cancel(let task): return "cancel t\(task)"
    case .advance(let milliseconds): return "advance by \(milliseconds) ms"
    case .runClock: return "run the clock"
    case .complete(let task, let succeeds, let manual):
      return "complete t\(task) with \(succeeds ? "201 \"m\(task)\"" : "URLError(.timedOut)") via "
        + (manual ? "the manual spy" : "the forwarding spy")
    case .settle: return "settle the held session"
    }
  }
}

/// A reference model of `URLSessionTask`'s life, as the doubles promise to follow it.
///
/// - A task is `suspended` until `resume()`, then `running`; `cancel()` makes it `canceling`,
///   and it is `completed` once its handler has run.
/// - The handler runs exactly once. `cancel()` before delivery wins: the handler gets
///   `URLError(.cancelled)` and the pending answer is dropped. `resume()` after `cancel()` or
///   completion does nothing; `cancel()` after completion does nothing.
/// - The mock answers at once when its stub has no delay (or a zero one); otherwise the answer
///   is due `delay` after `resume()` on the virtual clock, and answers due by an `advance` run
///   in (deadline, scheduling order) order, with the clock at each deadline. A task is
///   scheduled when it is resumed, so ties go to the task resumed first, whatever their
///   creation order.
/// - The manual spy holds resumed tasks until the test completes them; completing a task that
///   is not pending is refused. A forwarding spy makes the wrapped session's task when its own
///   is resumed, passes a later `cancel()` on and delivers what the wrapped session answers;
///   its journal and the wrapped mock's both record the task from then on. A task cancelled
///   before it was resumed never reaches the wrapped session: the spy delivers
///   `URLError(.cancelled)` itself, at once.
struct LifecycleModel {
  enum Session: String, CustomStringConvertible {
    case mock
    case manualSpy
    /// A spy forwarding to the mock.
    case forwardingSpy
    /// A spy forwarding to a ``HeldSession``, which answers (and cancels) only on `settle`.
    case heldSpy

    var description: String { rawValue }
  }

  enum State: String, CustomStringConvertible {
    case suspended, running, canceling, completed

    var taskState: URLSessionTask.State {
      switch self {
      case .suspended: return .suspended
      case .running: return .running
      case .canceling: return .canceling
      case .completed: return .completed
      }
    }

    var description: String { rawValue }
  }

  struct TaskRecord {
    let session: Session
    let delay: Int?
    /// The task's identifier in its session's journal.
    let identifier: Int
    /// For a resumed task of the forwarding spy, the identifier of the mock's task behind it.
    var innerIdentifier: Int?
    var state = State.suspended
    var outcome: DeliveredOutcome?
    var deliveries = 0
  }

  struct Event: Equatable, CustomStringConvertible {
    let taskIdentifier: Int
    let kind: SessionEvent.Kind

    var description: String {
      switch kind {
      case .created(let taskKind): return "#\(taskIdentifier) created \(taskKind.rawValue)"
      case .resumed: return "#\(taskIdentifier) resumed"
      case .cancelled: return "#\(taskIdentifier) cancelled"
      case .completed(let status, let error):
        return "#\(taskIdentifier) completed " + (error ?? status.map(String.init) ?? "nil")
      }
    }
  }

  private(set) var tasks: [TaskRecord] = []
  private(set) var deliveryOrder: [Int] = []
  /// Virtual time, in milliseconds.
  private(set) var now = 0
  /// Scheduled answers of the mock: (deadline, scheduling number, task).
  private(set) var scheduled: [(deadline: Int, number: Int, task: Int)] = []
  private var nextScheduleNumber = 0
  /// The manual spy's pending tasks, in resume order.
  private(set) var manualPending: [Int] = []
  /// What the held session holds, in the order it got it.
  private(set) var held: [Int] = []
  /// How many requests the mock's stub answered.
  private(set) var stubCalls = 0
  private(set) var journals: [Session: [Event]] = [
    .mock: [], .manualSpy: [], .forwardingSpy: [], .heldSpy: [],
  ]

  static func body(of task: Int) -> String { "\(task)" }

  mutating func create(_ session: Session, delay: Int?) {
    let identifier = nextIdentifier(in: session)
    record(session, identifier, .created(.data))
    tasks.append(
      TaskRecord(session: session, delay: delay, identifier: identifier, innerIdentifier: nil))
  }

  mutating func resume(_ index: Int) {
    guard tasks[index].state == .suspended else { return }
    tasks[index].state = .running
    let task = tasks[index]
    record(task.session, task.identifier, .resumed)
    switch task.session {
    case .mock:
      route(index)
    case .forwardingSpy:
      // The forwarding spy makes the wrapped mock's task only now.
      let inner = nextIdentifier(in: .mock)
      tasks[index].innerIdentifier = inner
      record(.mock, inner, .created(.data))
      record(.mock, inner, .resumed)
      route(index)
    case .manualSpy:
      manualPending.append(index)
    case .heldSpy:
      held.append(index)
    }
  }

  mutating func cancel(_ index: Int) {
    let task = tasks[index]
    guard task.state == .suspended || task.state == .running else { return }
    tasks[index].state = .canceling
    record(task.session, task.identifier, .cancelled)
    switch task.session {
    case .mock:
      scheduled.removeAll { $0.task == index }
      deliver(index, .failure(.cancelled))
    case .forwardingSpy:
      if let inner = task.innerIdentifier { record(.mock, inner, .cancelled) }
      scheduled.removeAll { $0.task == index }
      deliver(index, .failure(.cancelled))
    case .manualSpy:
      manualPending.removeAll { $0 == index }
      deliver(index, .failure(.cancelled))
    case .heldSpy:
      // A running task is held already, and the held session answers its cancellation when it
      // settles; a task never resumed never reached it, and the spy answers at once.
      if task.state == .suspended { deliver(index, .failure(.cancelled)) }
    }
  }

  mutating func advance(by milliseconds: Int) {
    let target = now + max(milliseconds, 0)
    deliverScheduled(dueBy: target)
    now = max(now, target)
  }

  mutating func runClock() {
    deliverScheduled(dueBy: nil)
  }

  /// Returns whether the spy accepts the completion.
  mutating func complete(_ index: Int, succeeds: Bool, viaManualSpy: Bool) -> Bool {
    guard viaManualSpy, tasks[index].session == .manualSpy,
      let position = manualPending.firstIndex(of: index)
    else { return false }
    manualPending.remove(at: position)
    deliver(
      index,
      succeeds ? .success(status: 201, body: "m\(index)") : .failure(.timedOut))
    return true
  }

  mutating func settle() {
    let due = held
    held = []
    for index in due {
      deliver(
        index,
        tasks[index].state == .canceling
          ? .failure(.cancelled) : .success(status: 200, body: "held"))
    }
  }

  private mutating func route(_ index: Int) {
    stubCalls += 1
    if let delay = tasks[index].delay, delay > 0 {
      scheduled.append((now + delay, nextScheduleNumber, index))
      nextScheduleNumber += 1
    } else {
      deliver(index, .success(status: 200, body: Self.body(of: index)))
    }
  }

  private mutating func deliverScheduled(dueBy target: Int?) {
    while let next = scheduled.indices.min(by: {
      (scheduled[$0].deadline, scheduled[$0].number) < (
        scheduled[$1].deadline, scheduled[$1].number
      )
    }) {
      let entry = scheduled[next]
      if let target, entry.deadline > target { return }
      scheduled.remove(at: next)
      now = max(now, entry.deadline)
      deliver(entry.task, .success(status: 200, body: Self.body(of: entry.task)))
    }
  }

  private mutating func deliver(_ index: Int, _ outcome: DeliveredOutcome) {
    precondition(tasks[index].state != .completed, "the model delivered twice")
    tasks[index].state = .completed
    tasks[index].outcome = outcome
    tasks[index].deliveries += 1
    deliveryOrder.append(index)
    let kind: SessionEvent.Kind
    switch outcome {
    case .success(let status, _): kind = .completed(statusCode: status, error: nil)
    case .failure(let code) where code == .cancelled:
      kind = .completed(statusCode: nil, error: "URLError(.cancelled)")
    case .failure: kind = .completed(statusCode: nil, error: "URLError(.timedOut)")
    case .otherError(let text): kind = .completed(statusCode: nil, error: text)
    }
    let task = tasks[index]
    if let inner = task.innerIdentifier { record(.mock, inner, kind) }
    record(task.session, task.identifier, kind)
  }

  private func nextIdentifier(in session: Session) -> Int {
    (journals[session] ?? []).reduce(0) { count, event in
      if case .created = event.kind { return count + 1 }
      return count
    } + 1
  }

  private mutating func record(_ session: Session, _ identifier: Int, _ kind: SessionEvent.Kind) {
    journals[session, default: []].append(Event(taskIdentifier: identifier, kind: kind))
  }
}

// MARK: - The doubles, driven beside the model

/// What the handlers of a sequence's tasks received, and the state their task was in while
/// the handler ran.
final class ModelRecorder: Sendable {
  private struct Log {
    /// Weak: each task's handler holds the recorder, so a strong reference here would be a
    /// cycle that keeps a never-finished task, its double and the double's clock alive.
    var tasks: [Int: WeakRef] = [:]
    var outcomes: [Int: [DeliveredOutcome]] = [:]
    var order: [Int] = []
    var statesInHandler: [Int: [URLSessionTask.State]] = [:]
  }

  private let log = Shared(Log())

  func register(_ task: MockTask, as index: Int) {
    log.withLock { $0.tasks[index] = WeakRef(task, "t\(index)") }
  }

  func handler(_ index: Int) -> @Sendable (Data?, URLResponse?, (any Error)?) -> Void {
    { data, response, error in
      // Reading the state takes the double's lock: a handler run under it would deadlock here.
      let state = (self.log.withLock { $0.tasks[index] }?.object as? MockTask)?.state
      self.log.withLock { log in
        log.outcomes[index, default: []].append(
          DeliveredOutcome(data: data, response: response, error: error))
        log.order.append(index)
        if let state { log.statesInHandler[index, default: []].append(state) }
      }
    }
  }

  func outcomes(_ index: Int) -> [DeliveredOutcome] { log.withLock { $0.outcomes[index] ?? [] } }
  func statesInHandler(_ index: Int) -> [URLSessionTask.State] {
    log.withLock { $0.statesInHandler[index] ?? [] }
  }
  var order: [Int] { log.withLock { $0.order } }
}

/// One random sequence: the doubles, the model, and the operations applied to both.
final class LifecycleHarness {
  let clock = VirtualClock()
  let mock: URLSessionMock
  let stub: Stub
  let manualSpy = SpySession()
  let forwardingSpy: SpySession
  let heldSession = HeldSession()
  let heldSpy: SpySession
  let recorder = ModelRecorder()
  private(set) var tasks: [MockTask] = []
  private(set) var model = LifecycleModel()
  private(set) var operations: [LifecycleOperation] = []
  /// Differences found while applying an operation (a refused completion the model accepts…).
  private var pending: [String] = []

  init() {
    mock = URLSessionMock(clock: clock)
    stub = mock.stub(.get("/t/{id}/{delay}")) { _, parameters in
      let answer = StubResponse.text(parameters["id"] ?? "?")
      guard let delay = parameters["delay"].flatMap({ Int($0) }) else { return answer }
      return answer.delayed(by: .milliseconds(delay))
    }
    forwardingSpy = SpySession(wrapping: mock)
    heldSpy = SpySession(wrapping: heldSession)
  }

  /// The next operation of a random sequence, chosen with the model's state in view.
  static func nextOperation(_ random: inout SplitMix64, _ model: LifecycleModel)
    -> LifecycleOperation
  {
    let count = model.tasks.count
    let roll = random.int(in: 0...99)
    if count == 0 || roll < 22 {
      let session: LifecycleModel.Session
      switch random.int(in: 0...99) {
      case 0..<40: session = .mock
      case 40..<65: session = .manualSpy
      case 65..<85: session = .forwardingSpy
      default: session = .heldSpy
      }
      let delay: Int?
      switch random.int(in: 0...9) {
      case 0, 1: delay = nil
      case 2: delay = 0
      default: delay = 500 * random.int(in: 1...4)
      }
      return .create(session, delay: delay)
    }
    let anyTask = random.int(in: 0...(count - 1))
    switch roll {
    case 22..<47: return .resume(anyTask)
    case 47..<62: return .cancel(anyTask)
    case 62..<80: return .advance(250 * random.int(in: -1...8))
    case 80..<84: return .runClock
    case 84..<94:
      // Mostly a pending task; now and then one the spy must refuse (refusals are also covered
      // by their own test).
      if !model.manualPending.isEmpty && random.chance(97) {
        return .complete(
          random.pick(model.manualPending), succeeds: random.chance(70), viaManualSpy: true)
      }
      guard random.chance(1) else { return .advance(250 * random.int(in: -1...8)) }
      return .complete(anyTask, succeeds: random.chance(70), viaManualSpy: random.chance(80))
    default: return .settle
    }
  }

  func apply(_ operation: LifecycleOperation) async {
    operations.append(operation)
    switch operation {
    case .create(let session, let delay):
      let index = tasks.count
      let url = URL(string: "https://example.com/t/\(index)/\(delay.map(String.init) ?? "none")")!
      let handler = recorder.handler(index)
      let task: MockTask
      switch session {
      case .mock: task = mock.dataTask(with: url, completionHandler: handler)
      case .manualSpy: task = manualSpy.dataTask(with: url, completionHandler: handler)
      case .forwardingSpy: task = forwardingSpy.dataTask(with: url, completionHandler: handler)
      case .heldSpy: task = heldSpy.dataTask(with: url, completionHandler: handler)
      }
      recorder.register(task, as: index)
      tasks.append(task)
      model.create(session, delay: delay)
    case .resume(let index):
      tasks[index].resume()
      model.resume(index)
    case .cancel(let index):
      tasks[index].cancel()
      model.cancel(index)
    case .advance(let milliseconds):
      await clock.advance(by: .milliseconds(milliseconds))
      model.advance(by: milliseconds)
    case .runClock:
      await clock.run()
      model.runClock()
    case .complete(let index, let succeeds, let viaManualSpy):
      completeOnSpy(index, succeeds: succeeds, viaManualSpy: viaManualSpy)
    case .settle:
      heldSession.settle()
      model.settle()
    }
  }

  private func completeOnSpy(_ index: Int, succeeds: Bool, viaManualSpy: Bool) {
    let spy = viaManualSpy ? manualSpy : forwardingSpy
    let task = tasks[index]
    let response: StubResponse =
      succeeds ? .text("m\(index)", status: 201) : .error(URLError(.timedOut))
    let accepted = model.complete(index, succeeds: succeeds, viaManualSpy: viaManualSpy)
    if accepted {
      if !spy.complete(task, with: response) {
        pending.append("complete t\(index) was refused, but the task is pending in the model")
      }
      return
    }
    // The spy must refuse, and report the refusal naming the task.
    var returned = true
    let reports = capturedReports { returned = spy.complete(task, with: response) }
    let named = reports.filter {
      $0.severity == .failure
        && $0.message.contains("Cannot complete task #\(task.taskIdentifier) ")
    }
    if returned { pending.append("complete t\(index) returned true; the model refuses it") }
    if named.count != 1 || reports.count != 1 {
      pending.append(
        "complete t\(index) was refused with \(named.count) matching of \(reports.count) "
          + "reports, expected 1: \(reports)")
    }
  }

  /// What differs between the doubles and the model; empty when they agree.
  func differences() -> [String] {
    var found = pending
    pending = []
    for (index, task) in tasks.enumerated() {
      let expected = model.tasks[index]
      if task.state != expected.state.taskState {
        found.append(
          "t\(index): state \(MockTaskState(task.state)), model: \(expected.state)")
      }
      let outcomes = recorder.outcomes(index)
      if outcomes.count != expected.deliveries {
        found.append(
          "t\(index): handler ran \(outcomes.count) time(s), model: \(expected.deliveries)")
      }
      if outcomes.last != expected.outcome {
        found.append(
          "t\(index): handler got \(outcomes.last.map(String.init(describing:)) ?? "nothing"), "
            + "model: \(expected.outcome.map(String.init(describing:)) ?? "nothing")")
      }
      if recorder.statesInHandler(index).contains(where: { $0 != .completed }) {
        found.append("t\(index): the handler ran while the task was not completed")
      }
      let error = (task.error as? URLError)?.code
      if case .failure(let code) = expected.outcome, error != code {
        found.append("t\(index): task.error is \(String(describing: task.error)), model: \(code)")
      }
    }
    if recorder.order != model.deliveryOrder {
      found.append(
        "delivery order \(recorder.order.map { "t\($0)" }), model: "
          + "\(model.deliveryOrder.map { "t\($0)" })")
    }
    if clock.now != VirtualClock.Instant(offset: .milliseconds(model.now)) {
      found.append("clock at \(clock.now), model: \(model.now) ms")
    }
    if clock.pendingCount != model.scheduled.count {
      found.append(
        "\(clock.pendingCount) deliveries pending on the clock, model: \(model.scheduled.count)")
    }
    let pendingOnSpy = manualSpy.pendingTasks.map { task in
      tasks.firstIndex { $0 === task } ?? -1
    }
    if pendingOnSpy != model.manualPending {
      found.append(
        "manual spy holds \(pendingOnSpy.map { "t\($0)" }), model: "
          + "\(model.manualPending.map { "t\($0)" })")
    }
    if heldSession.heldCount != model.held.count {
      found.append("held session holds \(heldSession.heldCount), model: \(model.held.count)")
    }
    if stub.callCount != model.stubCalls {
      found.append("stub answered \(stub.callCount) time(s), model: \(model.stubCalls)")
    }
    let journals: [(LifecycleModel.Session, String, [SessionEvent])] = [
      (.mock, "mock journal", mock.events), (.manualSpy, "manual spy journal", manualSpy.events),
      (.forwardingSpy, "forwarding spy journal", forwardingSpy.events),
      (.heldSpy, "held spy journal", heldSpy.events),
    ]
    for (session, name, events) in journals {
      let actual = events.map {
        LifecycleModel.Event(taskIdentifier: $0.taskIdentifier, kind: $0.kind)
      }
      let expected = model.journals[session] ?? []
      if actual != expected {
        let position =
          zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
          ?? min(actual.count, expected.count)
        let got = position < actual.count ? "\(actual[position])" : "nothing"
        let wanted = position < expected.count ? "\(expected[position])" : "nothing"
        found.append(
          "\(name) event \(position + 1) is \(got), model: \(wanted) (\(actual.count) events, "
            + "model: \(expected.count))")
      }
    }
    let sent = (model.journals[.mock] ?? []).filter { $0.kind == .resumed }.count
    if mock.requests.count != sent {
      found.append("mock sent \(mock.requests.count) request(s), model: \(sent)")
    }
    return found
  }

  /// The failure message: how to replay the sequence, what ran, and what differed.
  func report(sequence: Int, seed: UInt64, _ differences: [String]) -> String {
    var text =
      "The doubles left the lifecycle model in sequence \(sequence) (seed 0x"
      + String(seed, radix: 16) + "). Replay it alone with\n"
      + "  MODEL_SEED=0x\(String(seed, radix: 16)) MODEL_SEQUENCES=1 swift test --filter "
      + "ModelTests\nOperations (the last one is where they differed):\n"
    var created = 0
    for (number, operation) in operations.enumerated() {
      var line = operation.description
      if case .create = operation {
        line = "create t\(created)" + line.dropFirst("create".count)
        created += 1
      }
      text += "  \(number + 1). \(line)\n"
    }
    text += "Differences:\n" + differences.map { "  - \($0)\n" }.joined()
    return text
  }
}

/// A task state's name, for messages.
private struct MockTaskState: CustomStringConvertible {
  let state: URLSessionTask.State
  init(_ state: URLSessionTask.State) { self.state = state }

  var description: String {
    switch state {
    case .suspended: return "suspended"
    case .running: return "running"
    case .canceling: return "canceling"
    case .completed: return "completed"
    @unknown default: return "unknown"
    }
  }
}
