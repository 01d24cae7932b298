import Foundation
import HTTPSessionKit
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The streaming scenarios: server-sent events read through `stream(for:)` on the mock, and
/// WebSocket messages received from a stub's script through the mock's WebSocket task, each
/// beside the same values passed through a bare `AsyncStream`, per event or message.
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
      Scenario(name: "asyncstream-messages", metric: .nsPerRequest, requests: events) { count in
        asyncStreamMessages(count)
      },
      Scenario(name: "websocket-messages", metric: .nsPerRequest, requests: events) { count in
        webSocketMessages(count)
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

  /// The message every WebSocket scenario passes.
  static let message = URLSessionWebSocketTask.Message.string(#"{"price":42}"#)

  /// The floor: `count` ready messages through an `AsyncStream`, read in a loop.
  static func asyncStreamMessages(_ count: Int) -> Workload {
    let (stream, continuation) = AsyncStream<URLSessionWebSocketTask.Message>.makeStream()
    for _ in 0..<count { continuation.yield(message) }
    continuation.finish()
    let seen = Sink()
    return Workload(
      async: {
        for await received in stream {
          seen.calls += 1
          if case .string(let text) = received { seen.bytes += text.utf8.count }
        }
      },
      check: { try checkMessages(seen, "asyncstream-messages", expected: count) })
  }

  /// `count` messages of one `.webSocket` script, received by the code's loop from the mock's
  /// WebSocket task: the script's steps, the journal's records and the task's inbox.
  static func webSocketMessages(_ count: Int) -> Workload {
    let mock = URLSessionMock()
    mock.stub(
      .get("/feed"),
      with: .webSocket(Array(repeating: .send(message), count: count) + [.close(.normalClosure)]))
    let request = URLRequest(url: URL(string: "wss://api.example.com/feed")!)
    let seen = Sink()
    return Workload(
      async: {
        let socket = mock.webSocket(with: request)
        socket.resume()
        for _ in 0..<count {
          if case .string(let text) = try await socket.receive() {
            seen.calls += 1
            seen.bytes += text.utf8.count
          }
        }
      },
      check: { try checkMessages(seen, "websocket-messages", expected: count) })
  }

  private static func checkMessages(_ seen: Sink, _ scenario: String, expected: Int) throws {
    guard case .string(let text) = message else { return }
    let bytes = expected * text.utf8.count
    guard seen.calls == expected, seen.bytes == bytes else {
      throw BenchmarkError(
        description: "\(scenario): expected \(expected) messages with \(bytes) bytes, got "
          + "\(seen.calls) messages, \(seen.bytes) bytes")
    }
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
