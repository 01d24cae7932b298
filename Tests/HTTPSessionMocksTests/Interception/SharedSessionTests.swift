import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `interceptingSharedSession`: `URLSession.shared` answered by a mock, one scope at a time.
///
/// The requests go to a closed loopback port, so that one the mock did not answer fails at once
/// (connection refused) and never leaves the machine. The tests run one after another: what
/// happens outside a scope can only be seen while no other test holds one (the scope is
/// process-wide by nature; that is what it is for).
@Suite(.serialized) struct SharedSessionTests {
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
    let secondStarted = Box(false)

    let one = Task {
      try await first.interceptingSharedSession {
        enteredOutlet.yield()
        let before = try await body(of: "/who")
        for await _ in release { break }
        let after = try await body(of: "/who")
        return [before, after, secondStarted.value ? "overlap" : "alone"]
      }
    }
    for await _ in entered { break }
    let two = Task {
      try await second.interceptingSharedSession {
        secondStarted.value = true
        return try await body(of: "/who")
      }
    }
    await SharedSessionGate.waitUntilWaiting(1)
    #expect(!secondStarted.value)
    releaseOutlet.yield()
    #expect(try await one.value == ["first", "first", "alone"])
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
