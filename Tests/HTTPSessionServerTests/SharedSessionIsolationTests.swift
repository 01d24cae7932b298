import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import HTTPSessionServer
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `interceptingSharedSession` while other code uses `URLSession.shared` at the same time, against
/// a live loopback server: a request from outside the scope's task tree must reach the server,
/// not the scope's mock.
@Suite struct SharedSessionIsolationTests {
  /// The body of `url` as `URLSession.shared` loads it with `data(from:)`.
  private func sharedText(_ url: URL) async throws -> String {
    text(try await URLSession.shared.data(from: url).0)
  }

  /// The body of `url` as a completion-handler data task of `URLSession.shared` gets it, the task
  /// resumed on the calling task; `nil` if it failed.
  private func sharedTextByHandler(_ url: URL) async -> String? {
    await withCheckedContinuation { continuation in
      URLSession.shared.dataTask(with: url) { data, _, error in
        continuation.resume(returning: error == nil ? data.map(text) : nil)
      }.resume()
    }
  }

  @Test func aTaskOutsideTheScopeReachesTheServerWhileTheScopeAnswersItsOwn() async throws {
    let served = URLSessionMock()
    served.stub(.get("/who"), with: .text("server"))
    let server = try served.startServer()
    defer { server.stop() }
    let url = server.baseURL.appendingPathComponent("who")
    let mock = URLSessionMock()
    mock.stub(.get("/who"), with: .text("scope"))
    let (entered, enteredOutlet) = AsyncStream<Void>.makeStream()
    let (outsideDone, outsideDoneOutlet) = AsyncStream<Void>.makeStream()

    // Two concurrent tasks: the scope stays open until the other task's requests are done.
    let inside = Task {
      try await mock.interceptingSharedSession {
        enteredOutlet.yield()
        for await _ in outsideDone { break }
        return [try await sharedText(url), await sharedTextByHandler(url)]
      }
    }
    let outside = Task {
      for await _ in entered { break }
      defer { outsideDoneOutlet.yield() }
      return [try await sharedText(url), await sharedTextByHandler(url)]
    }
    #expect(try await outside.value == ["server", "server"])
    #expect(try await inside.value == ["scope", "scope"])
    #expect(mock.requests.count == 2)
    #expect(served.requests.count == 2)
  }
}
