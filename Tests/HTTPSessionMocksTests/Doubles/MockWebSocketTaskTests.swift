import Foundation
import HTTPSessionKit
import TestSupport
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

private let chatURL = URL(string: "wss://chat.example.com/chat")!

private func text(_ message: URLSessionWebSocketTask.Message) -> String? {
  if case .string(let value) = message { return value }
  return nil
}

@Suite struct MockWebSocketTaskTests {
  /// A mock whose forgotten-resume watchdog measures "real time" on `realTime`, with a chat
  /// stub, and a WebSocket task for it that nobody resumes.
  private func forgottenTask(_ realTime: VirtualClock) -> (URLSessionMock, any HTTPWebSocketTask) {
    let mock = URLSessionMock()
    mock.watchForgottenResumes(after: .seconds(5), realTime: realTime)
    mock.stub(.get("/chat"), with: .webSocket([.send(.string("hi"))]))
    return (mock, mock.webSocket(with: chatURL))
  }

  @Test func aReceiveOnATaskNeverResumedFailsAfterFiveSecondsNamingTheFix() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    let (mock, socket) = forgottenTask(realTime)
    try await expectReport(containing: "never resumed", "resume()", "1 call of receive()") {
      let receive = Task { try await socket.receive() }
      // The watchdog's timer sleeps once the receive waits.
      try await realTime.waitForSleepers(count: 1)
      await realTime.advance(by: .seconds(5))
      await #expect(throws: URLError.self) { _ = try await receive.value }
    }
    #expect(socket.state == .suspended)
    #expect(mock.requests.isEmpty)
  }

  @Test func sendsAndPingsOnATaskNeverResumedFailToo() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    let (_, socket) = forgottenTask(realTime)
    let pinged = Shared<[String]>([])
    try await expectReport(containing: "1 call of send(_:)", "1 call of sendPing") {
      let send = Task { try await socket.send(.string("hello")) }
      try await #require(socket as? MockWebSocketTask).waitForWaitingSends(count: 1)
      socket.sendPing { error in pinged.append(error.map { "\(type(of: $0))" } ?? "pong") }
      try await realTime.waitForSleepers(count: 1)
      await realTime.advance(by: .seconds(5))
      await #expect(throws: URLError.self) { try await send.value }
    }
    #expect(pinged.current == ["URLError"])
  }

  @Test func aTaskResumedInTimeIsNotReported() async throws {
    let realTime = VirtualClock(stallTimeout: nil)
    let (_, socket) = forgottenTask(realTime)
    let receive = Task { try await socket.receive() }
    try await realTime.waitForSleepers(count: 1)
    socket.resume()
    #expect(text(try await receive.value) == "hi")
    // The watchdog's timer ended with the resume: moving past its limit reports nothing.
    await realTime.advance(by: .seconds(10))
    #expect(socket.state == .running)
  }

  @Test func theScriptRunsInOrderAndTheJournalTimesEachMessageOnTheClock() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/chat"),
      with: .webSocket([
        .send(.string("one")), .receive(nil), .wait(.seconds(2)), .send(.string("two")),
      ]))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    #expect(text(try await socket.receive()) == "one")
    try await socket.send(.data(Data([7])))
    let second = Task { try await socket.receive() }
    await clock.advance(by: .seconds(2))
    #expect(text(try await second.value) == "two")
    let records = mock.webSocketMessages(for: .get("/chat"))
    #expect(records.map(\.direction) == [.fromServer, .fromClient, .fromServer])
    #expect(records.map(\.time) == [.zero, .zero, .seconds(2)])
    #expect(records.map(\.description).last == "server → client .string(\"two\") at 2.0 seconds")
    // The script ran out without a close: the connection stays open.
    #expect(socket.state == .running)
    #expect(mock.webSocketCloses(for: .any).isEmpty)
  }

  @Test func aWaitAfterASendIsOnTheClockByTheTimeTheClientHasTheMessage() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/chat"),
      with: .webSocket([.send(.string("one")), .wait(.seconds(3)), .send(.string("two"))]))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    #expect(text(try await socket.receive()) == "one")
    #expect(clock.pendingCount == 1)
    #expect(clock.nextDeadline == clock.now.advanced(by: .seconds(3)))
    let second = Task { try await socket.receive() }
    await clock.advance(by: .seconds(3))
    #expect(text(try await second.value) == "two")
    #expect(mock.webSocketMessages(for: .get("/chat")).map(\.time) == [.zero, .seconds(3)])
  }

  @Test func theUpgradeIsAnExchangeWithStatus101NamingTheOfferedSubprotocol() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket(subprotocol: "chat", [.send(.string("hi"))]))
    var request = URLRequest(url: chatURL)
    request.setValue("superchat, chat", forHTTPHeaderField: "Sec-WebSocket-Protocol")
    let socket = mock.webSocket(with: request)
    socket.resume()
    _ = try await socket.receive()
    let head = try #require(mock.exchanges.first?.response as? HTTPURLResponse)
    #expect(head.statusCode == 101)
    #expect(head.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") == "chat")
    #expect(head.value(forHTTPHeaderField: "Upgrade") == "websocket")
    #expect(mock.events.first?.kind == .created(.webSocket))
  }

  @Test func aTaskNeverResumedSendsNothing() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket([.send(.string("hi"))]))
    let socket = mock.webSocket(with: chatURL)
    #expect(socket.state == .suspended)
    #expect(mock.requests.isEmpty)
    #expect(mock.webSocketMessages(for: .any).isEmpty)
  }

  @Test func sendsAndPingsBeforeTheHandshakeWaitForIt() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/chat"),
      with: .webSocket([.receive(.string("early")), .send(.string("ok"))]).delayed(by: .seconds(1)))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    let pong = Shared<[String]>([])
    socket.sendPing { error in pong.withLock { $0.append(error == nil ? "pong" : "error") } }
    let sending = Task { try await socket.send(.string("early")) }
    try await mock.waitForRequests(count: 1)
    #expect(pong.current.isEmpty)
    await clock.advance(by: .seconds(1))
    try await sending.value
    #expect(text(try await socket.receive()) == "ok")
    #expect(pong.current == ["pong"])
  }

  /// A WebSocket task whose handshake `script` answers after a second on the clock, with
  /// sends of "1" then "2" waiting for it.
  private func twoSendsWaiting(for script: [WebSocketStep]) async throws -> (
    VirtualClock, URLSessionMock, MockWebSocketTask, Task<Void, any Error>, Task<Void, any Error>
  ) {
    // These tests do advance the clock, after two real-time waits for the sends: under the
    // thread sanitizer, with the whole suite running on two cores, those waits once took over
    // the watchdog's default 5 s, which then failed the handshake. A longer limit still
    // catches a real hang.
    let clock = VirtualClock(stallTimeout: .seconds(60))
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/chat"), with: StubResponse.webSocket(script).delayed(by: .seconds(1)))
    let socket = try #require(mock.webSocket(with: chatURL) as? MockWebSocketTask)
    socket.resume()
    let first = Task { try await socket.send(.string("1")) }
    try await socket.waitForWaitingSends(count: 1)
    let second = Task { try await socket.send(.string("2")) }
    try await socket.waitForWaitingSends(count: 2)
    return (clock, mock, socket, first, second)
  }

  /// A send made once the connection is open comes after the sends that waited for the
  /// handshake. (It once could overtake them: the connection opened before they were handed
  /// over.) The script first sends many messages, so that the client's answer to the first
  /// one (on another thread) comes while the handshake is still being completed.
  @Test func aSendRightAfterTheHandshakeNeverOvertakesTheOnesThatWaited() async throws {
    let flood = Array(repeating: WebSocketStep.send(.string("x")), count: 300)
    for round in 0..<30 {
      let (clock, mock, socket, first, second) = try await twoSendsWaiting(
        for: flood + [.receive(nil), .receive(nil), .receive(nil)])
      let third = Task {
        _ = try await socket.receive()
        try await socket.send(.string("3"))
      }
      await clock.advance(by: .seconds(1))
      try await first.value
      try await second.value
      try await third.value
      let sent = mock.webSocketMessages(for: .get("/chat")).filter { $0.direction == .fromClient }
      #expect(sent.map { text($0.message) } == ["1", "2", "3"], "round \(round)")
      socket.cancel()
    }
  }

  @Test func aCancelWhileTheWaitingSendsAreHandedOverFailsTheRest() async throws {
    // The script closes as soon as the first waiting message reaches it.
    let (clock, mock, _, first, second) = try await twoSendsWaiting(
      for: [.receive(nil), .close(.goingAway, reason: nil)])
    await clock.advance(by: .seconds(1))
    try await first.value
    // The connection closed before "2" was handed over: its send fails, as URLSession's does.
    await #expect(throws: (any Error).self) { try await second.value }
    let sent = mock.webSocketMessages(for: .get("/chat")).filter { $0.direction == .fromClient }
    #expect(sent.map { text($0.message) } == ["1"])
  }

  @Test func anUnexpectedMessageIsReportedNamingBothAndClosesWith1008() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket([.receive(.string("hi")), .send(.string("ok"))]))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    try await expectReport {
      try await socket.send(.string("bye"))
    } matching: {
      $0.message.contains(#".string("hi")"#) && $0.message.contains(#".string("bye")"#)
        && $0.message.contains("1008")
    }
    await #expect(throws: (any Error).self) { _ = try await socket.receive() }
    #expect(socket.closeCode == .policyViolation)
    #expect(socket.state == .completed)
    let closes = mock.webSocketCloses(for: .get("/chat"))
    #expect(closes.map(\.direction) == [.fromServer, .fromClient])
    #expect(closes.map(\.code) == [.policyViolation, .policyViolation])
    await #expect(throws: (any Error).self) { try await socket.send(.string("more")) }
  }

  @Test func aStatusRefusesTheUpgrade() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .status(403))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
    #expect(error?.code == .badServerResponse)
    #expect(error?.localizedDescription.contains("403") == true)
    #expect(socket.state == .completed)
  }

  @Test func anUnmatchedUpgradeIsReportedAndFailsTheTask() async throws {
    let mock = URLSessionMock()
    let socket = mock.webSocket(with: chatURL)
    await expectReport {
      socket.resume()
      await #expect(throws: (any Error).self) { _ = try await socket.receive() }
    } matching: {
      $0.message.contains("/chat")
    }
  }

  @Test func anyOtherTaskGets426FromAWebSocketStub() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket([.send(.string("hi"))]))
    let (body, response) = try await mock.data(from: URL(string: "https://chat.example.com/chat")!)
    #expect((response as? HTTPURLResponse)?.statusCode == 426)
    #expect(String(decoding: body, as: UTF8.self).contains("WebSocket"))
  }

  @Test func theServersCloseSetsTheCodeAndReasonAndEndsReceiveAndSend() async throws {
    let mock = URLSessionMock()
    mock.stub(
      .get("/chat"), with: .webSocket([.send(.string("last")), .close(.goingAway, reason: "bye")]))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    #expect(text(try await socket.receive()) == "last")
    let error = await #expect(throws: (any Error).self) { _ = try await socket.receive() }
    #expect((error as? NSError)?.domain == NSPOSIXErrorDomain)
    #expect(socket.closeCode == .goingAway)
    #expect(socket.closeReason == Data("bye".utf8))
    await #expect(throws: (any Error).self) { try await socket.send(.string("late")) }
    let ping = Shared<[Bool]>([])
    socket.sendPing { error in ping.withLock { $0.append(error != nil) } }
    #expect(ping.current == [true])
  }

  @Test func cancelWithACodeRecordsTheClientsClose() async throws {
    let clock = VirtualClock()
    let mock = URLSessionMock(clock: clock)
    mock.stub(
      .get("/chat"), with: .webSocket([.wait(.seconds(5)), .send(.string("never"))]))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    let reading = Task { try await socket.receive() }
    try await mock.waitForRequests(count: 1)
    socket.cancel(with: .normalClosure, reason: Data("done".utf8))
    await #expect(throws: URLError.self) { _ = try await reading.value }
    await clock.advance(by: .seconds(10))
    #expect(mock.webSocketMessages(for: .any).isEmpty)
    let closes = mock.webSocketCloses(for: .any)
    #expect(closes.map(\.direction) == [.fromClient])
    #expect(closes.first?.code == .normalClosure)
    #expect(closes.first?.reason == Data("done".utf8))
    #expect(socket.state == .completed)
    #expect(socket.closeCode == .normalClosure)
  }

  @Test func aDropLosesTheConnection() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket([.drop, .send(.string("never"))]))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
    #expect(error?.code == .networkConnectionLost)
    #expect(socket.closeCode == .invalid)
    #expect(mock.webSocketMessages(for: .any).isEmpty)
  }

  @Test func aMessageOverTheMaximumSizeClosesWith1009() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket([.send(.data(Data(count: 100)))]))
    let socket = mock.webSocket(with: chatURL)
    socket.maximumMessageSize = 10
    socket.resume()
    let error = await #expect(throws: (any Error).self) { _ = try await socket.receive() }
    #expect("\(error.map { $0.localizedDescription } ?? "")".contains("100 bytes"))
    #expect(socket.closeCode == .messageTooBig)
    #expect(mock.webSocketCloses(for: .any).map(\.code) == [.messageTooBig])
  }

  @Test func receiveEndsWhenItsTaskIsCancelled() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket([]))
    let socket = mock.webSocket(with: chatURL)
    socket.resume()
    let reading = Task { try await socket.receive() }
    reading.cancel()
    await #expect(throws: CancellationError.self) { _ = try await reading.value }
    #expect(socket.state == .running)
  }

  @Test func aWaitOnAReleasedClockIsReportedAndDropsTheConnection() async throws {
    let socket = Self.socketWhoseClockIsGone()
    socket.resume()
    try await expectReport {
      try await socket.send(.string("go"))
    } matching: {
      $0.message.contains("no longer exists")
    }
    let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
    #expect(error?.code == .networkConnectionLost)
  }

  /// A WebSocket task whose mock and VirtualClock are gone: its core remains, its clock does
  /// not.
  private static func socketWhoseClockIsGone() -> any HTTPWebSocketTask {
    let mock = URLSessionMock(clock: VirtualClock())
    mock.stub(.get("/chat"), with: .webSocket([.receive(nil), .wait(.seconds(1))]))
    return mock.webSocket(with: chatURL)
  }

  @Test(.timeLimit(.minutes(1))) func aWaitNothingAdvancesEndsWith1011WhenTheClockStalls()
    async throws
  {
    let clock = VirtualClock(stallTimeout: .milliseconds(50))
    let mock = URLSessionMock(clock: clock)
    mock.stub(.get("/chat"), with: .webSocket([.wait(.seconds(1)), .send(.string("late"))]))
    let socket = mock.webSocket(with: chatURL)
    // The test waits on the script without advancing the clock: the watchdog ends the wait.
    await expectReport {
      socket.resume()
      await #expect(throws: (any Error).self) { _ = try await socket.receive() }
    } matching: {
      $0.message.contains("nothing advanced it")
    }
    #expect(socket.closeCode == .internalServerError)
    #expect(
      mock.webSocketCloses(for: .any).first?.reason
        == Data("nothing advanced the VirtualClock".utf8))
  }

  @Test func aSubprotocolThatIsNotATokenIsReportedWhereTheStubIs() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/chat"), with: .webSocket(subprotocol: "two words", []))
    let socket = mock.webSocket(with: chatURL)
    await expectReport {
      socket.resume()
      await #expect(throws: (any Error).self) { _ = try await socket.receive() }
    } matching: {
      $0.message.contains("two words")
    }
  }

  @Test func aSpyWithoutAWebSocketDoorSaysSo() async throws {
    let spy = SpySession()
    let socket = spy.webSocket(with: chatURL)
    socket.resume()
    let error = await #expect(throws: URLError.self) { _ = try await socket.receive() }
    #expect(error?.localizedDescription.contains("SpySession") == true)
  }

  @Test func stepsDescribeThemselvesAsCode() {
    let steps: [WebSocketStep] = [
      .send(.string("a")), .receive(nil), .receive(.data(Data([1, 2]))), .wait(.seconds(1)),
      .ping, .close(.normalClosure, reason: "x"), .close(.goingAway), .drop,
    ]
    #expect(
      steps.map(\.description) == [
        #".send(.string("a"))"#, ".receive(nil)", ".receive(.data(2 bytes: 01 02))",
        ".wait(1.0 seconds)", ".ping", #".close(1000, reason: "x")"#, ".close(1001)", ".drop",
      ])
  }
}
