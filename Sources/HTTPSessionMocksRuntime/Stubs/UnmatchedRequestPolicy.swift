import HTTPSessionKit

/// What a ``URLSessionMock`` does with a request that no stub matches.
///
/// ```swift
/// let mock = URLSessionMock()                               // .fail: the default
/// mock.unmatchedRequestPolicy = .respond(with: .status(404))  // quietly answer 404
/// mock.unmatchedRequestPolicy = .passThrough(to: URLSession.shared)
/// ```
public struct UnmatchedRequestPolicy: Sendable {
  enum Kind: Sendable {
    case fail
    case respond(StubResponse)
    case passThrough(any HTTPSession)
  }

  let kind: Kind

  /// The code under test gets a transport error (`URLError(.resourceUnavailable)`, never a
  /// made-up success) and the test fails with a report of the request and the closest stubs,
  /// pointing at the line that created the mock.
  public static var fail: UnmatchedRequestPolicy { UnmatchedRequestPolicy(kind: .fail) }

  /// Answers with `response` and records the request as unmatched, without failing the test.
  /// `verifyNoUnmatchedRequests()` still reports it.
  public static func respond(with response: StubResponse) -> UnmatchedRequestPolicy {
    UnmatchedRequestPolicy(kind: .respond(response))
  }

  /// Forwards the request to `session` (a real `URLSession`, another double) and delivers
  /// whatever it answers; the request is recorded as unmatched.
  public static func passThrough(to session: any HTTPSession) -> UnmatchedRequestPolicy {
    UnmatchedRequestPolicy(kind: .passThrough(session))
  }
}
