import Foundation

/// Collects what completion handlers deliver, from any thread, in arrival order.
///
/// ```swift
/// let outcomes = Outcomes<Result<User, GitHubError>>()
/// client.fetchUser("octocat", completion: outcomes.append)
/// #expect(outcomes.count == 1)
/// ```
final class Outcomes<Value: Sendable>: @unchecked Sendable {
  // @unchecked Sendable: `values` is only touched while `lock` is held.
  private let lock = NSLock()
  private var values: [Value] = []

  func append(_ value: Value) {
    lock.withLock { values.append(value) }
  }

  var all: [Value] { lock.withLock { values } }
  var count: Int { all.count }
  var last: Value? { all.last }
}

extension Result {
  /// The failure, or `nil` on success.
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
