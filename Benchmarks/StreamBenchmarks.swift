import Foundation
import HTTPSessionKit
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The streaming scenarios: server-sent events read through `stream(for:)` on the mock, beside
/// the same events passed through a bare `AsyncStream`, per event.
extension Scenario {
  static func streamScenarios(quick: Bool) -> [Scenario] {
    let events = quick ? 5_000 : 30_000
    return [
      Scenario(name: "asyncstream-events", metric: .nsPerRequest, requests: events) { count in
        asyncStreamEvents(count)
      },
      Scenario(name: "stream-events", metric: .nsPerRequest, requests: events) { count in
        streamEvents(count)
      },
    ]
  }

  /// The event every streaming scenario passes.
  static let event = ServerSentEvent(id: "7", event: "tick", data: #"{"price":42}"#)

  /// The floor: `count` ready events through an `AsyncStream`, read in a loop.
  static func asyncStreamEvents(_ count: Int) -> Workload {
    let (stream, continuation) = AsyncStream<ServerSentEvent>.makeStream()
    for _ in 0..<count { continuation.yield(event) }
    continuation.finish()
    let seen = Sink()
    return Workload(
      async: {
        for await received in stream {
          seen.calls += 1
          seen.bytes += received.data.utf8.count
        }
      },
      check: { try checkEvents(seen, "asyncstream-events", expected: count) })
  }

  /// `count` events of one `.events` stub, every `.zero`, through `stream(for:)` on a mock:
  /// the stub's body is cut into its events, delivered into the stream, and parsed back by
  /// `.events`.
  static func streamEvents(_ count: Int) -> Workload {
    let mock = URLSessionMock()
    mock.stub(.get("/events"), with: .events(Array(repeating: event, count: count), every: .zero))
    let request = URLRequest(url: URL(string: "https://api.example.com/events")!)
    let seen = Sink()
    return Workload(
      async: {
        let (stream, _) = try await mock.stream(for: request)
        for try await received in stream.events {
          seen.calls += 1
          seen.bytes += received.data.utf8.count
        }
      },
      check: { try checkEvents(seen, "stream-events", expected: count) })
  }

  private static func checkEvents(_ seen: Sink, _ scenario: String, expected: Int) throws {
    let bytes = expected * event.data.utf8.count
    guard seen.calls == expected, seen.bytes == bytes else {
      throw BenchmarkError(
        description: "\(scenario): expected \(expected) events with \(bytes) bytes of data, got "
          + "\(seen.calls) events, \(seen.bytes) bytes")
    }
  }
}
