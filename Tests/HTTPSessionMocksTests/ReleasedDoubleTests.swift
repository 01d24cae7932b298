import Foundation
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A task holds its double weakly (so that dropped doubles never leak); resuming a task whose
/// double is gone is reported, not silently cancelled.
@Suite struct ReleasedDoubleTests {
  private let url = URL(string: "https://example.com/a")!

  @Test func resumingATaskOfAReleasedMockIsReportedAndCancelled() {
    let error = Shared<(any Error)?>(nil)
    expectReport {
      let task = makeTaskOfReleasedMock { delivered in error.withLock { $0 = delivered } }
      task.resume()
    } matching: { report in
      report.message.contains("was resumed after its URLSessionMock was released")
        && report.message.contains("GET https://example.com/a")
    }
    #expect((error.current as? URLError)?.code == .cancelled)
  }

  private func makeTaskOfReleasedMock(_ done: @escaping @Sendable ((any Error)?) -> Void)
    -> MockTask
  {
    URLSessionMock(status: 200).dataTask(with: url) { _, _, error in done(error) }
  }
}
