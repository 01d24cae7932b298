import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A resolved answer on its way to a task.
struct Answer: @unchecked Sendable {
  // @unchecked Sendable: the body is a value, and the response and error are immutable once
  // made; nothing mutates them after the answer is built.
  let data: Data?
  let response: URLResponse?
  let error: (any Error)?

  func deliver(to task: MockTask, settlingResume: Bool = false) {
    task.finish(
      data: data, response: response, error: error, yieldingToCancel: true,
      settlingResume: settlingResume)
  }
}
