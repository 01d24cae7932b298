import Foundation
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A task keeps what it needs to finish, as URLSession's tasks keep their session: a resumed
/// task of a double the test no longer holds still delivers its answer.
@Suite struct ReleasedDoubleTests {
  private let url = URL(string: "https://example.com/a")!

  @Test func aTaskOfADroppedMockDeliversTheCannedAnswer() {
    let status = Shared<Int?>(nil)
    let mockRef = Shared<WeakRef?>(nil)
    let task = makeTaskOfDroppedMock(keeping: mockRef) { response in
      status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode }
    }
    #expect(mockRef.current?.isAlive == false, "the mock object itself is gone")
    task.resume()
    #expect(status.current == 204)
    #expect(task.state == .completed)
  }

  @Test func aDelayedTaskOfADroppedMockIsAnsweredWhenTheClockAdvances() async {
    let clock = VirtualClock()
    let status = Shared<Int?>(nil)
    do {
      let mock = URLSessionMock(status: 202, delay: .seconds(3), clock: clock)
      mock.dataTask(with: url) { _, response, _ in
        status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode }
      }.resume()
    }
    #expect(clock.pendingCount == 1)
    await clock.advance(by: .seconds(3))
    #expect(status.current == 202)
  }

  @Test func aForwardingSpyThatWasDroppedStillDeliversTheWrappedAnswer() {
    let backend = URLSessionMock(status: 201)
    let status = Shared<Int?>(nil)
    SpySession(wrapping: backend).dataTask(with: url) { _, response, _ in
      status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode }
    }.resume()
    #expect(status.current == 201)
    #expect(backend.requests.count == 1)
  }

  private func makeTaskOfDroppedMock(
    keeping ref: Shared<WeakRef?>, _ done: @escaping @Sendable (URLResponse?) -> Void
  ) -> MockTask {
    let mock = URLSessionMock(status: 204)
    ref.withLock { $0 = WeakRef(mock, "mock") }
    return mock.dataTask(with: url) { _, response, _ in done(response) }
  }
}
