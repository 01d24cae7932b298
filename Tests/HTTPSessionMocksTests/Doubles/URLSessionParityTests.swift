import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The mock's task life checked side by side with a real `URLSession`.
///
/// The real session talks to `http://127.0.0.1:1/`, a closed loopback port: it fails at once with
/// a real connection error and nothing leaves the machine. The mock answers that request with
/// the same error, so that everything but the cancel semantics is equal by construction. The
/// real handler is awaited with a continuation, never a sleep.
@Suite struct URLSessionParityTests {
  /// How the mock answers: synchronously inside `resume()`, or later on a virtual clock.
  enum MockFlavor: CaseIterable, Sendable, CustomTestStringConvertible {
    case immediate
    case delayed

    var testDescription: String {
      switch self {
      case .immediate: return "mock answering inside resume()"
      case .delayed: return "mock answering after 1 s of virtual time"
      }
    }
  }

  /// What a scenario looked like from the outside, once every answer had arrived.
  struct Observation: Equatable, CustomStringConvertible {
    var deliveries: Int
    var errorDomain: String?
    var errorCode: Int?
    var hasData: Bool
    var hasResponse: Bool
    var finalState: URLSessionTask.State

    var description: String {
      "\(deliveries) deliveries, error \(errorDomain ?? "-") \(errorCode.map(String.init) ?? "-"), "
        + "data \(hasData), response \(hasResponse), final state \(finalState.rawValue)"
    }
  }

  /// One side of a comparison: makes a task, and finishes whatever the session still owes.
  struct Side: Sendable {
    var name: String
    var makeTask:
      @Sendable (URL, @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) ->
        any HTTPDataTask
    /// Suspends until `seen` has its one delivery and the session has settled its task.
    var finish: @Sendable (Deliveries) async -> Void
  }

  private let url = ClosedPortSession.url

  /// The real side, on a fresh session.
  private func realSide(_ real: ClosedPortSession) -> Side {
    Side(
      name: "URLSession",
      makeTask: { url, handler in real.session.dataTask(with: url, completionHandler: handler) },
      finish: { seen in
        await seen.waitForCount(1)
        await real.settle()
      })
  }

  /// The mock side: it fails every request with the error the closed port gives.
  private func mockSide(_ flavor: MockFlavor) -> (Side, URLSessionMock) {
    let refused = URLError(.cannotConnectToHost)
    switch flavor {
    case .immediate:
      let mock = URLSessionMock(error: refused)
      let side = Side(
        name: "URLSessionMock",
        makeTask: { url, handler in mock.dataTask(with: url, completionHandler: handler) },
        finish: { _ in })
      return (side, mock)
    case .delayed:
      let clock = VirtualClock()
      let mock = URLSessionMock(error: refused, delay: .seconds(1), clock: clock)
      let side = Side(
        name: "URLSessionMock",
        makeTask: { url, handler in mock.dataTask(with: url, completionHandler: handler) },
        finish: { _ in await clock.run() })
      return (side, mock)
    }
  }

  /// Runs `actions` on a fresh task of `side`, lets every answer arrive, runs `afterwards`,
  /// and lets the session settle again.
  private func observe(
    _ side: Side, _ actions: (any HTTPDataTask) -> Void,
    afterwards: (any HTTPDataTask) -> Void = { _ in }
  ) async -> Observation {
    let seen = Deliveries()
    let task = side.makeTask(url, seen.handler)
    actions(task)
    await side.finish(seen)
    afterwards(task)
    await side.finish(seen)
    let error = seen.first?.error.map { $0 as NSError }
    return Observation(
      deliveries: seen.count, errorDomain: error?.domain, errorCode: error?.code,
      hasData: seen.first?.data != nil, hasResponse: seen.first?.response != nil,
      finalState: task.state)
  }

  /// Observes the same scenario on a real session and on the mock, and expects them equal.
  private func compare(
    _ flavor: MockFlavor, _ actions: (any HTTPDataTask) -> Void,
    afterwards: (any HTTPDataTask) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation
  ) async -> (real: Observation, mock: Observation) {
    let real = ClosedPortSession()
    let (mockSide, _) = mockSide(flavor)
    let realObservation = await observe(realSide(real), actions, afterwards: afterwards)
    let mockObservation = await observe(mockSide, actions, afterwards: afterwards)
    #expect(realObservation == mockObservation, sourceLocation: sourceLocation)
    return (realObservation, mockObservation)
  }

  // MARK: - Side by side

  @Test(arguments: MockFlavor.allCases)
  func cancelBeforeResume(_ flavor: MockFlavor) async {
    let (real, _) = await compare(flavor) { task in task.cancel() }
    #expect(real.errorCode == NSURLErrorCancelled)
    #expect(real.deliveries == 1)
    #expect(real.finalState == .completed)
  }

  @Test(arguments: MockFlavor.allCases)
  func cancelThenResume(_ flavor: MockFlavor) async {
    let (real, _) = await compare(flavor) { task in
      task.cancel()
      task.resume()
    }
    #expect(real.errorCode == NSURLErrorCancelled)
    #expect(real.deliveries == 1)
  }

  @Test(arguments: MockFlavor.allCases)
  func resumeTwice(_ flavor: MockFlavor) async {
    let (real, _) = await compare(flavor) { task in
      task.resume()
      task.resume()
    }
    #expect(real.errorCode == NSURLErrorCannotConnectToHost)
    #expect(real.deliveries == 1)
    #expect(real.finalState == .completed)
  }

  @Test(arguments: MockFlavor.allCases)
  func cancelAfterCompletion(_ flavor: MockFlavor) async {
    let (real, _) = await compare(flavor) { task in
      task.resume()
    } afterwards: { task in
      task.cancel()
    }
    #expect(real.errorCode == NSURLErrorCannotConnectToHost, "the cancel came too late to count")
    #expect(real.deliveries == 1)
    #expect(real.finalState == .completed)
  }

  @Test(arguments: MockFlavor.allCases)
  func resumeAndCancelAfterCompletion(_ flavor: MockFlavor) async {
    let (real, _) = await compare(flavor) { task in
      task.resume()
    } afterwards: { task in
      task.resume()
      task.cancel()
      task.resume()
    }
    #expect(real.deliveries == 1)
    #expect(real.finalState == .completed)
  }

  @Test(arguments: MockFlavor.allCases)
  func cancelTwiceBeforeResume(_ flavor: MockFlavor) async {
    let (real, _) = await compare(flavor) { task in
      task.cancel()
      task.cancel()
    }
    #expect(real.deliveries == 1)
    #expect(real.errorCode == NSURLErrorCancelled)
  }

  @Test func theCancelledErrorCarriesTheSameDetails() async throws {
    let real = ClosedPortSession()
    let mock = URLSessionMock(error: URLError(.cannotConnectToHost))
    let realSeen = Deliveries()
    let mockSeen = Deliveries()
    real.session.dataTask(with: url, completionHandler: realSeen.handler).cancel()
    mock.dataTask(with: url, completionHandler: mockSeen.handler).cancel()
    let realError = try #require(await realSeen.firstDelivery().error as? URLError)
    let mockError = try #require(await mockSeen.firstDelivery().error as? URLError)
    for error in [realError, mockError] {
      let info = (error as NSError).userInfo
      #expect((error as NSError).domain == NSURLErrorDomain)
      #expect((error as NSError).code == NSURLErrorCancelled)
      #expect(error.code == .cancelled)
      #expect(error.failingURL == url)
      #expect(info[NSURLErrorFailingURLErrorKey] as? URL == url)
    }
    let realInfo = (realError as NSError).userInfo
    let mockInfo = (mockError as NSError).userInfo
    #expect(mockInfo["NSErrorFailingURLStringKey"] as? String == url.absoluteString)
    #expect(
      realInfo["NSErrorFailingURLStringKey"] as? String
        == mockInfo["NSErrorFailingURLStringKey"] as? String)
    #expect(realError.localizedDescription == mockError.localizedDescription)
  }

  // MARK: - State

  @Test func stateGoesSuspendedRunningCompletedOnBoth() async {
    let real = ClosedPortSession()
    let realSeen = Deliveries()
    let realTask = real.session.dataTask(with: url, completionHandler: realSeen.handler)
    real.holdDeliveries()
    var realStates = [realTask.state]
    realTask.resume()
    realStates.append(realTask.state)
    real.releaseDeliveries()
    await realSeen.waitForCount(1)
    await real.settle()
    realStates.append(realTask.state)

    let clock = VirtualClock()
    let mock = URLSessionMock(
      error: URLError(.cannotConnectToHost), delay: .seconds(1), clock: clock)
    let mockSeen = Deliveries()
    let mockTask = mock.dataTask(with: url, completionHandler: mockSeen.handler)
    var mockStates = [mockTask.state]
    mockTask.resume()
    mockStates.append(mockTask.state)
    await clock.run()
    mockStates.append(mockTask.state)

    #expect(realStates == [.suspended, .running, .completed])
    #expect(mockStates == realStates)
  }

  /// The one visible difference: URLSession reports `canceling` between `cancel()` and the
  /// handler, which it runs later on its delegate queue; the mock runs the handler inside
  /// `cancel()`, so by the time `cancel()` returns its task is already `completed`.
  @Test func cancelPassesThroughCancelingOnURLSessionAndCompletesInsideCancelOnTheMock() async {
    let real = ClosedPortSession()
    let realSeen = Deliveries()
    let realTask = real.session.dataTask(with: url, completionHandler: realSeen.handler)
    real.holdDeliveries()
    var realStates = [realTask.state]
    realTask.cancel()
    realStates.append(realTask.state)
    #expect(realSeen.count == 0, "URLSession delivers the cancel later, on its delegate queue")
    real.releaseDeliveries()
    await realSeen.waitForCount(1)
    await real.settle()
    realStates.append(realTask.state)

    let mock = URLSessionMock(error: URLError(.cannotConnectToHost))
    let mockSeen = Deliveries()
    let mockTask = mock.dataTask(with: url, completionHandler: mockSeen.handler)
    var mockStates = [mockTask.state]
    mockTask.cancel()
    mockStates.append(mockTask.state)
    #expect(mockSeen.count == 1, "the mock delivers the cancel inside cancel()")
    mockStates.append(mockTask.state)

    #expect(realStates == [.suspended, .canceling, .completed])
    #expect(mockStates == [.suspended, .completed, .completed])
    #expect(realStates.first == mockStates.first)
    #expect(realStates.last == mockStates.last)
  }
}
