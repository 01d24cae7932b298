import Foundation
import HTTPSessionKit
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `HTTPSession.webSocket(with:)`: Foundation's own task from `URLSession`, a task that fails
/// clearly from a session without WebSockets.
@Suite struct HTTPWebSocketTaskTests {
  /// A port nothing listens on, on the loopback interface.
  private let closed = URL(string: "ws://127.0.0.1:1/chat")!

  /// A session of a test's own that implements only what HTTPSession requires.
  private struct PlainSession: HTTPSession {
    let base = URLSession(configuration: .ephemeral)
    func dataTask(
      with request: URLRequest,
      completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask { base.dataTask(with: request, completionHandler: completionHandler) }
    func dataTask(
      with url: URL,
      completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask { base.dataTask(with: url, completionHandler: completionHandler) }
    func uploadTask(
      with request: URLRequest, from bodyData: Data?,
      completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionUploadTask {
      base.uploadTask(with: request, from: bodyData, completionHandler: completionHandler)
    }
    func downloadTask(
      with request: URLRequest,
      completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
      base.downloadTask(with: request, completionHandler: completionHandler)
    }
    func data(for request: URLRequest) async throws -> (Data, URLResponse) {
      try await base.data(for: request)
    }
    func data(from url: URL) async throws -> (Data, URLResponse) { try await base.data(from: url) }
    func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse) {
      try await base.upload(for: request, from: bodyData)
    }
    func download(for request: URLRequest) async throws -> (URL, URLResponse) {
      try await base.download(for: request)
    }
  }

  @Test func urlSessionHandsOutFoundationsOwnTask() {
    let session: any HTTPSession = URLSession(configuration: .ephemeral)
    let socket = session.webSocket(with: closed)
    #expect(socket is URLSessionWebSocketTask)
    #expect(socket.state == .suspended)
    #expect(socket.closeCode == .invalid)
    socket.cancel()
  }

  #if canImport(FoundationNetworking)
    @Test(.timeLimit(.minutes(1)))
    func onLinuxFoundationsTaskFailsAtResume() async {
      let socket = URLSession(configuration: .ephemeral).webSocket(with: URLRequest(url: closed))
      socket.resume()
      await #expect {
        _ = try await socket.receive()
      } throws: { ($0 as? URLError)?.code == .unsupportedURL }
    }
  #endif

  @Test func aSessionWithoutWebSocketsHandsOutATaskThatFailsNamingIt() async {
    let socket = PlainSession().webSocket(with: closed)
    #expect(socket.state == .suspended)
    socket.resume()
    #expect(socket.state == .completed)
    await #expect {
      try await socket.send(.string("hi"))
    } throws: { error in
      let urlError = error as? URLError
      return urlError?.code == .unsupportedURL && urlError?.failingURL == closed
        && error.localizedDescription.contains("PlainSession")
    }
    await #expect(throws: URLError.self) { _ = try await socket.receive() }
    let pong = Shared<(any Error)?>(nil)
    socket.sendPing { error in pong.withLock { $0 = error } }
    #expect((pong.withLock { $0 } as? URLError)?.code == .unsupportedURL)
  }
}
