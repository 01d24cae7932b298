import Foundation
import TestSupport

/// Collects what completion handlers deliver, from any thread, in arrival order.
///
/// ```swift
/// let outcomes = Outcomes<Result<User, GitHubError>>()
/// client.fetchUser("octocat", completion: outcomes.append)
/// #expect(outcomes.count == 1)
/// ```
struct Outcomes<Value: Sendable>: Sendable {
  private let values = Shared<[Value]>([])

  func append(_ value: Value) {
    values.append(value)
  }

  var all: [Value] { values.current }
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
