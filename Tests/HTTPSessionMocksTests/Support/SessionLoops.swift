import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Sends one request into a loop of sessions that starts at `session`, expecting the loop's
/// report (by default, that of a loop through a spy); returns the error code the request
/// ended with.
func sendThroughLoop(
  _ session: some HTTPSession,
  reporting message: String = "was forwarded 16 times in a row: this SpySession leads back"
) -> URLError.Code? {
  let seen = Shared<(any Error)?>(nil)
  expectReport {
    session.dataTask(with: URL(string: "https://example.com/loop")!) { _, _, error in
      seen.withLock { $0 = error }
    }.resume()
  } matching: { report in
    report.message.contains(message)
  }
  return (seen.current as? URLError)?.code
}
