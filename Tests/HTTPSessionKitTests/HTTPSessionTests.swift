import Foundation
import HTTPSessionKit
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `URLSession` as the production `HTTPSession`. Every request goes to a closed port on the
/// loopback interface, which fails at once with a real connection error and never leaves the
/// machine.
@Suite struct HTTPSessionTests {
  /// A port nothing listens on. Never any other address.
  private let closedPort = URL(string: "http://127.0.0.1:1/")!

  private func makeSession() -> URLSession {
    URLSession(configuration: .ephemeral)
  }

  /// The task types a session hands out, as the protocol sees them.
  private func taskTypes<Session: HTTPSession>(of _: Session.Type) -> [Any.Type] {
    [Session.DataTask.self, Session.UploadTask.self, Session.DownloadTask.self]
  }

  private func isHTTPSession(_ value: Any) -> Bool {
    value is any HTTPSession
  }

  /// Runs `body` to make and start a task whose completion handler resumes the continuation.
  private func completion(
    of body: (@escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> Void
  ) async -> (any Error)? {
    await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
      body { _, _, error in continuation.resume(returning: error) }
    }
  }

  // MARK: - Conformance

  @Test func urlSessionIsAnHTTPSession() {
    let session = makeSession()
    defer { session.finishTasksAndInvalidate() }
    #expect(isHTTPSession(session))
    // (Not `URLSession.shared`: the test process leaves the shared session untouched until
    // HTTPSessionMocks' interception tests have installed their dispatcher for it.)
    #expect(!isHTTPSession(NSObject()))
  }

  @Test func urlSessionHandsOutItsOwnTaskClasses() {
    let types = taskTypes(of: URLSession.self).map(ObjectIdentifier.init)
    let expected: [Any.Type] = [
      URLSessionDataTask.self, URLSessionUploadTask.self, URLSessionDownloadTask.self,
    ]
    #expect(types == expected.map(ObjectIdentifier.init))
  }

  @Test func urlSessionTasksAreHTTPDataTasks() {
    let classes: [Any.Type] = [
      URLSessionTask.self, URLSessionDataTask.self, URLSessionUploadTask.self,
      URLSessionDownloadTask.self,
    ]
    #expect(classes.allSatisfy { $0 is any HTTPDataTask.Type })
    #expect(!((NSObject.self as Any.Type) is any HTTPDataTask.Type))
  }

  @Test func plainURLSessionCallsStillReturnFoundationsTaskTypes() async {
    // This is the line a client module keeps writing; it must stay unambiguous and concrete.
    // (A session of its own rather than `URLSession.shared`, which this process leaves untouched
    // for HTTPSessionMocks' interception tests; the overloads are the same.)
    let session = makeSession()
    defer { session.finishTasksAndInvalidate() }
    let error = await completion { handler in
      let task = session.dataTask(with: closedPort, completionHandler: handler)
      let concrete: URLSessionDataTask = task
      #expect(concrete.state == .suspended)
      concrete.cancel()
    }
    #expect((error as? URLError)?.code == .cancelled)
  }

  @Test func plainURLSessionRequestUploadAndDownloadCallsKeepTheirTypes() async {
    let session = makeSession()
    defer { session.finishTasksAndInvalidate() }
    let request = URLRequest(url: closedPort)
    let data: URLSessionDataTask = session.dataTask(with: request) { _, _, _ in }
    let upload: URLSessionUploadTask = session.uploadTask(with: request, from: Data()) { _, _, _ in
    }
    let download: URLSessionDownloadTask = session.downloadTask(with: request) { _, _, _ in }
    let identifiers = [data.taskIdentifier, upload.taskIdentifier, download.taskIdentifier]
    #expect(Set(identifiers).count == 3)
    #expect([data.state, upload.state, download.state] == [.suspended, .suspended, .suspended])
  }

  // MARK: - Through `any HTTPSession`

  @Test func anyHTTPSessionHandsOutAnyHTTPDataTask() async throws {
    let session: any HTTPSession = makeSession()
    defer { (session as? URLSession)?.finishTasksAndInvalidate() }
    let holder = Shared<(any HTTPDataTask)?>(nil)
    let error = await completion { handler in
      let task: any HTTPDataTask = session.dataTask(with: closedPort, completionHandler: handler)
      holder.withLock { $0 = task }
      #expect(task is URLSessionDataTask)
      #expect(task.state == .suspended)
      task.resume()
    }
    let urlError = try #require(error as? URLError)
    #expect(urlError.code == .cannotConnectToHost)
    #expect(urlError.failingURL == closedPort)
    #expect(holder.current.map { $0.taskIdentifier > 0 } == true)
  }

  @Test func anyHTTPSessionMakesEveryKindOfTask() async {
    let session: any HTTPSession = makeSession()
    defer { (session as? URLSession)?.finishTasksAndInvalidate() }
    let request = URLRequest(url: closedPort)
    let upload: any HTTPDataTask = session.uploadTask(with: request, from: Data("x".utf8)) {
      _, _, _ in
    }
    let download: any HTTPDataTask = session.downloadTask(with: request) { _, _, _ in }
    #expect(upload is URLSessionUploadTask)
    #expect(download is URLSessionDownloadTask)
    let downloadError = await withCheckedContinuation {
      (continuation: CheckedContinuation<(any Error)?, Never>) in
      session.downloadTask(with: request) { file, _, error in
        #expect(file == nil)
        continuation.resume(returning: error)
      }.resume()
    }
    #expect((downloadError as? URLError)?.code == .cannotConnectToHost)
  }

  @Test func completionHandlerAPIWithAURLRequestReachesTheNetworkStack() async {
    let session: any HTTPSession = makeSession()
    defer { (session as? URLSession)?.finishTasksAndInvalidate() }
    var request = URLRequest(url: closedPort)
    request.httpMethod = "POST"
    let error = await completion { handler in
      session.uploadTask(with: request, from: Data("x".utf8), completionHandler: handler).resume()
    }
    #expect((error as? URLError)?.code == .cannotConnectToHost)
  }

  // MARK: - Async forwards

  @Test func asyncDataForRequestForwardsToURLSession() async {
    let session: any HTTPSession = makeSession()
    defer { (session as? URLSession)?.finishTasksAndInvalidate() }
    let error = await #expect(throws: URLError.self) {
      _ = try await session.data(for: URLRequest(url: closedPort))
    }
    #expect(error?.code == .cannotConnectToHost)
  }

  @Test func asyncDataFromURLForwardsToURLSession() async {
    let session: any HTTPSession = makeSession()
    defer { (session as? URLSession)?.finishTasksAndInvalidate() }
    let error = await #expect(throws: URLError.self) {
      _ = try await session.data(from: closedPort)
    }
    #expect(error?.code == .cannotConnectToHost)
  }

  @Test func asyncUploadForwardsToURLSession() async {
    let session: any HTTPSession = makeSession()
    defer { (session as? URLSession)?.finishTasksAndInvalidate() }
    var request = URLRequest(url: closedPort)
    request.httpMethod = "PUT"
    let error = await #expect(throws: URLError.self) {
      _ = try await session.upload(for: request, from: Data("body".utf8))
    }
    #expect(error?.code == .cannotConnectToHost)
  }

  @Test func asyncDownloadForwardsToURLSession() async {
    let session: any HTTPSession = makeSession()
    defer { (session as? URLSession)?.finishTasksAndInvalidate() }
    let error = await #expect(throws: URLError.self) {
      _ = try await session.download(for: URLRequest(url: closedPort))
    }
    #expect(error?.code == .cannotConnectToHost)
  }

  @Test func plainURLSessionAsyncCallsStillReachTheNetworkStack() async {
    // Called on a `URLSession` by name, each resolves to Foundation's own method (here corelibs'
    // form with a `delegate:` parameter, which defaults to nil), as without this package.
    let session = makeSession()
    defer { session.finishTasksAndInvalidate() }
    var upload = URLRequest(url: closedPort)
    upload.httpMethod = "PUT"
    let errors = [
      await #expect(throws: URLError.self) {
        let _: (Data, URLResponse) = try await session.data(for: URLRequest(url: closedPort))
      },
      await #expect(throws: URLError.self) {
        let _: (Data, URLResponse) = try await session.data(from: closedPort)
      },
      await #expect(throws: URLError.self) {
        let _: (Data, URLResponse) = try await session.upload(for: upload, from: Data("x".utf8))
      },
      await #expect(throws: URLError.self) {
        let _: (URL, URLResponse) = try await session.download(for: URLRequest(url: closedPort))
      },
    ]
    #expect(errors.map { $0?.code } == Array(repeating: .cannotConnectToHost, count: 4))
  }

  @Test func genericCodeRunsAgainstURLSession() async {
    func fetch(_ url: URL, with session: some HTTPSession) async throws -> Data {
      try await session.data(from: url).0
    }
    let session = makeSession()
    defer { session.finishTasksAndInvalidate() }
    let error = await #expect(throws: URLError.self) {
      _ = try await fetch(closedPort, with: session)
    }
    #expect(error?.code == .cannotConnectToHost)
  }
}
