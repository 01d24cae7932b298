import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `interceptingSharedSession`: `URLSession.shared` answered by a mock, one scope at a time.
///
/// The requests go to a closed loopback port, so that one the mock did not answer fails at once
/// (connection refused) and never leaves the machine. The tests run one after another, as the
/// documentation asks of tests that use `URLSession.shared`: a scope answers every request it
/// cannot place, whichever test made it, and `waitUntilWaiting(_:)` counts the scopes of the
/// whole process. (Requests from outside the scopes' task trees, in parallel with them, are in
/// `SharedSessionIsolationTests`, against a live loopback server.)
///
/// Every test has a time limit, and none waits on a request that may fail: if the dispatcher
/// could not be installed in time (something else used `URLSession.shared` first), the scopes
/// fail saying so and the suite ends, instead of holding the test process.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SharedSessionTests {
  private static let closed = "http://127.0.0.1:9"

  private func body(of path: String) async throws -> String {
    let url = URL(string: Self.closed + path)!
    return String(decoding: try await URLSession.shared.data(from: url).0, as: UTF8.self)
  }

  private func mock(answering text: String) -> URLSessionMock {
    let mock = URLSessionMock()
    mock.stub(.get("/who"), with: .text(text))
    return mock
  }

  @Test func theSharedSessionIsAnsweredOnlyInsideTheScope() async throws {
    let mock = mock(answering: "mocked")
    let inside = try await mock.interceptingSharedSession { try await body(of: "/who") }
    #expect(inside == "mocked")
    #expect(mock.requests.count == 1)
    await #expect(throws: URLError.self) { _ = try await body(of: "/who") }
    #expect(mock.requests.count == 1)
  }

  @Test func overlappingScopesTakeTurns() async throws {
    let first = mock(answering: "first")
    let second = mock(answering: "second")
    let (entered, enteredOutlet) = AsyncStream<Void>.makeStream()
    let (release, releaseOutlet) = AsyncStream<Void>.makeStream()
    let secondStarted = Shared(false)

    let one = Task {
      await first.interceptingSharedSession {
        enteredOutlet.yield()
        // `try?`: the scope holds its turn until released even if a request fails.
        let before = try? await body(of: "/who")
        for await _ in release { break }
        let after = try? await body(of: "/who")
        return [before, after, secondStarted.current ? "overlap" : "alone"]
      }
    }
    for await _ in entered { break }
    let two = Task {
      try await second.interceptingSharedSession {
        secondStarted.withLock { $0 = true }
        return try await body(of: "/who")
      }
    }
    await SharedSessionGate.waitUntilWaiting(1)
    #expect(!secondStarted.current)
    releaseOutlet.yield()
    #expect(await one.value == ["first", "first", "alone"])
    #expect(try await two.value == "second")
    #expect(first.requests.count == 2)
    #expect(second.requests.count == 1)
  }

  @Test func nestedScopesOnOneTaskDoNotWait() async throws {
    let outer = mock(answering: "outer")
    let inner = mock(answering: "inner")
    let answers = try await outer.interceptingSharedSession {
      let a = try await body(of: "/who")
      let b = try await outer.interceptingSharedSession { try await body(of: "/who") }
      let c = try await inner.interceptingSharedSession { try await body(of: "/who") }
      let d = try await body(of: "/who")
      return [a, b, c, d]
    }
    #expect(answers == ["outer", "outer", "inner", "outer"])
    #expect(outer.requests.count == 3)
    #expect(inner.requests.count == 1)
  }

  @Test func aScopeThatThrowsEndsTheInterception() async throws {
    struct Failure: Error {}
    let mock = mock(answering: "mocked")
    await #expect(throws: Failure.self) {
      try await mock.interceptingSharedSession {
        _ = try await body(of: "/who")
        throw Failure()
      }
    }
    await #expect(throws: URLError.self) { _ = try await body(of: "/who") }
    // The turn was handed back: another scope enters at once.
    let again = try await mock.interceptingSharedSession { try await body(of: "/who") }
    #expect(again == "mocked")
    #expect(mock.requests.count == 2)
  }

  @Test func theSynchronousFormReturnsTheBodysValue() async throws {
    let mock = mock(answering: "sync")
    let seen = Deliveries()
    let url = URL(string: Self.closed + "/who")!
    // On a thread of its own, as synchronous code runs: the form blocks its thread.
    let answer = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
      Thread {
        let value = mock.interceptingSharedSession { () -> Int in
          let answered = DispatchSemaphore(value: 0)
          URLSession.shared.dataTask(with: url) { data, response, error in
            seen.handler(data, response, error)
            answered.signal()
          }.resume()
          answered.wait()
          return 42
        }
        done.resume(returning: value)
      }.start()
    }
    #expect(answer == 42)
    #expect(seen.first?.data == Data("sync".utf8))
    #expect(mock.requests.count == 1)
  }

  @Test func anUnmatchedSharedRequestFailsWithoutReachingTheNetwork() async throws {
    let mock = URLSessionMock()
    mock.unmatchedRequestPolicy = .respond(with: .status(404))
    let status = try await mock.interceptingSharedSession {
      (try await URLSession.shared.data(from: URL(string: Self.closed + "/nothing")!).1
        as? HTTPURLResponse)?.statusCode
    }
    #expect(status == 404)
    #expect(mock.unmatchedRequests.count == 1)
  }

  @Test func aReportOfTheScopesMockReachesTheScopesTest() async throws {
    // The mock is made outside the capture scope, and URL loading makes the protocol object of a
    // `URLSession.shared` data task on a background thread (its URL cache is looked up first):
    // only the context the scope captured can bring the report into the scope.
    let mock = mock(answering: "unused")
    let (code, reports) = await withCapturedReports {
      await mock.interceptingSharedSession { () async -> URLError.Code? in
        do {
          _ = try await body(of: "/nothing")
          return nil
        } catch {
          return (error as? URLError)?.code
        }
      }
    }
    #expect(code == .resourceUnavailable)
    #expect(reports.count == 1)
    #expect(reports.first?.message.contains("GET \(Self.closed)/nothing") == true)
  }

  @Test func aTaskMadeInAScopeThatHasEndedIsNotAnsweredByTheNextScope() async throws {
    let first = mock(answering: "first")
    let second = mock(answering: "second")
    let (go, goOutlet) = AsyncStream<Void>.makeStream()
    let late = await first.interceptingSharedSession { () async -> Task<String?, Never> in
      Task {
        for await _ in go { break }
        return try? await body(of: "/who")
      }
    }
    let answer = await second.interceptingSharedSession { () async -> String? in
      goOutlet.yield()
      return await late.value
    }
    #expect(answer == nil, "the request should have gone on to the closed port")
    #expect(first.requests.isEmpty)
    #expect(second.requests.isEmpty)
  }

  @Test func aDetachedTaskIsOutsideTheScope() async throws {
    let mock = mock(answering: "mocked")
    let answer = await mock.interceptingSharedSession {
      await Task.detached { try? await body(of: "/who") }.value
    }
    #expect(answer == nil, "the request should have gone on to the closed port")
    #expect(mock.requests.isEmpty)
  }

  @Test func requestsTheScopeCannotPlaceAreAnsweredAndNamedInOneWarning() async throws {
    let mock = mock(answering: "mocked")
    mock.stub(.get("/again"), with: .text("again"))
    mock.stub(.get("/thread"), with: .text("thread"))
    let url = { @Sendable (path: String) in URL(string: Self.closed + path)! }
    let (texts, reports) = await withCapturedReports {
      await mock.interceptingSharedSession { () async -> [String?] in
        // A completion handler runs on URLSession's delegate queue and a Thread on its own: no
        // Swift task, so nothing tells the scope where their requests come from.
        let chained = await withCheckedContinuation { continuation in
          URLSession.shared.dataTask(with: url("/who")) { first, _, _ in
            URLSession.shared.dataTask(with: url("/again")) { second, _, _ in
              continuation.resume(returning: [first, second])
            }.resume()
          }.resume()
        }
        let threaded = await withCheckedContinuation { continuation in
          Thread {
            URLSession.shared.dataTask(with: url("/thread")) { data, _, _ in
              continuation.resume(returning: data)
            }.resume()
          }.start()
        }
        return (chained + [threaded]).map { $0.map { String(decoding: $0, as: UTF8.self) } }
      }
    }
    #expect(texts == ["mocked", "again", "thread"])
    #expect(reports.count == 1)
    let report = try #require(reports.first)
    #expect(report.severity == .warning)
    #expect(report.message.contains("GET \(Self.closed)/again"))
    #expect(report.message.contains("GET \(Self.closed)/thread"))
    #expect(
      !report.message.contains("GET \(Self.closed)/who"), "that one came from the scope's task")
    #expect(report.message.contains(".serialized"))
  }

  @Test func aSharedSessionThatCannotBeInterceptedFailsTheTestSayingWhy() async throws {
    _ = await SharedSessionGate.withProbeResult(false) {
      expectReport(
        containing: "cannot intercept URLSession.shared", "installSharedSessionDispatcher()",
        "makeURLSession()"
      ) {
        let mock = mock(answering: "unused")
        let value = mock.interceptingSharedSession { 7 }
        #expect(value == 7)
      }
    }
  }

  @Test func installingTheDispatcherTwiceIsHarmless() async throws {
    URLSessionMock.installSharedSessionDispatcher()
    URLSessionMock.installSharedSessionDispatcher()
    let mock = mock(answering: "still")
    let reports = await capturedReports {
      let text = try? await mock.interceptingSharedSession { try await body(of: "/who") }
      #expect(text == "still")
    }
    #expect(reports.isEmpty, "the probe found URLSession.shared routed through the dispatcher")
  }
}
