import Foundation
import TestSupport
import Testing

@testable import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `URLSession.stream(for:)` against a real server on 127.0.0.1 that sends one event, then
/// holds the rest of its body until the test asks for it: the first event can only arrive
/// before the end if the stream really streams.
///
/// Each test makes a session of its own and never touches `URLSession.shared`: every suite of
/// the package runs in one test process, and on Linux `URLSession.shared` keeps the protocol
/// classes registered when it is first used, so a test here that used it first would take it
/// from `interceptingSharedSession`'s tests, which install their dispatcher before it.
@Suite(.serialized) struct URLSessionStreamingTests {
  /// A Python server: `GET /events` sends `data: one`, then waits until `GET /release`, then
  /// sends `data: two` and ends; `GET /missing` answers 404. It prints its port first.
  private static let script = #"""
    import http.server, socketserver, sys, threading
    release = threading.Event()
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args): pass
        def do_GET(self):
            if self.path == "/release":
                release.set()
                self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
            elif self.path == "/events":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                def chunk(text):
                    data = text.encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data)); self.wfile.flush()
                chunk("data: one\n\n")
                release.wait(120)
                chunk("data: two\n\n")
                self.wfile.write(b"0\r\n\r\n"); self.wfile.flush()
            else:
                self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
    server.serve_forever()
    """#

  private static let python = executableOnPath("python3")

  private func startServer() async throws -> (ChildProcess, URL) {
    let python = try #require(Self.python)
    let child = try ChildProcess(
      python, ["-u", "-c", Self.script], environment: cleanEnvironment())
    let line = try #require(await child.line(timeout: 30), "the server printed no port")
    let base = try #require(URL(string: "http://127.0.0.1:\(line)"))
    return (child, base)
  }

  @Test(.enabled(if: python != nil, "python3 is not installed"), .timeLimit(.minutes(1)))
  func eventsArriveBeforeTheBodyEnds() async throws {
    let (server, base) = try await startServer()
    defer { server.stop() }
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }

    let (stream, response) = try await session.stream(
      for: URLRequest(url: base.appendingPathComponent("events")))
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    var events = stream.events.makeAsyncIterator()
    // The server holds "two" and the end of its body until /release: "one" came first.
    #expect(try await events.next()?.data == "one")
    _ = try await session.data(from: base.appendingPathComponent("release"))
    #expect(try await events.next()?.data == "two")
    #expect(try await events.next() == nil)
  }

  @Test(.enabled(if: python != nil, "python3 is not installed"), .timeLimit(.minutes(1)))
  func aURLSessionUsedAsAnHTTPSessionStreamsToo() async throws {
    let (server, base) = try await startServer()
    defer { server.stop() }
    let own = URLSession(configuration: .default)
    defer { own.finishTasksAndInvalidate() }
    let session: any HTTPSession = own
    let (stream, _) = try await session.stream(
      for: URLRequest(url: base.appendingPathComponent("events")))
    var lines = stream.lines.makeAsyncIterator()
    #expect(try await lines.next() == "data: one")
    _ = try await own.data(from: base.appendingPathComponent("release"))
    #expect(try await lines.next() == "")
    #expect(try await lines.next() == "data: two")
  }

  @Test(.enabled(if: python != nil, "python3 is not installed"), .timeLimit(.minutes(1)))
  func anErrorStatusIsAResponseWithItsBody() async throws {
    let (server, base) = try await startServer()
    defer { server.stop() }
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let (stream, response) = try await session.stream(
      for: URLRequest(url: base.appendingPathComponent("missing")))
    #expect((response as? HTTPURLResponse)?.statusCode == 404)
    var pieces = 0
    for try await _ in stream { pieces += 1 }
    #expect(pieces == 0)
  }

  @Test(.timeLimit(.minutes(1)))
  func aConnectionThatFailsThrowsBeforeAnyResponse() async throws {
    // Port 1 on the loopback interface: nothing listens, the connection is refused at once.
    let request = URLRequest(url: URL(string: "http://127.0.0.1:1/events")!)
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    await #expect(throws: URLError.self) {
      _ = try await session.stream(for: request)
    }
  }
}

/// The relay behind `URLSession.stream(for:)`, driven in the order a call that is cancelled
/// already can meet: the data task ends before the continuation is kept.
///
/// The sessions end with `finishTasksAndInvalidate()`, never `invalidateAndCancel()`: on Linux
/// the latter makes `URLSession.shared` (it checks whether it was called on it), which this
/// test process leaves for the interception tests.
@Suite struct StreamRelayTests {
  @Test(.timeLimit(.minutes(1)))
  func anEndBeforeTheStartResumesTheCallWithTheFailure() async throws {
    let relay = StreamRelay()
    let session = URLSession(configuration: .ephemeral)
    let task = session.dataTask(with: URL(string: "http://127.0.0.1:9/never")!)
    defer {
      task.cancel()
      session.finishTasksAndInvalidate()
    }
    relay.urlSession(session, task: task, didCompleteWithError: URLError(.cancelled))
    let error = await #expect(throws: URLError.self) {
      _ = try await withCheckedThrowingContinuation { continuation in
        relay.start(head: continuation)
      }
    }
    #expect(error?.code == .cancelled)
  }

  @Test(.timeLimit(.minutes(1)))
  func anEndAfterTheStartResumesTheCallOnce() async throws {
    let relay = StreamRelay()
    let session = URLSession(configuration: .ephemeral)
    let task = session.dataTask(with: URL(string: "http://127.0.0.1:9/never")!)
    defer {
      task.cancel()
      session.finishTasksAndInvalidate()
    }
    let error = await #expect(throws: URLError.self) {
      _ = try await withCheckedThrowingContinuation { continuation in
        relay.start(head: continuation)
        relay.urlSession(session, task: task, didCompleteWithError: URLError(.timedOut))
        relay.urlSession(session, task: task, didCompleteWithError: URLError(.cancelled))
      }
    }
    #expect(error?.code == .timedOut)
  }
}
