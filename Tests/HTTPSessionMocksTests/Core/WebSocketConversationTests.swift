import Foundation
import TestSupport
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A peer that notes, at each call, how many entries wait on the clock: what a door would see
/// if a test looked at the clock the moment the client had the message.
private final class ClockWatchingPeer: WebSocketPeer {
  let clock: VirtualClock
  let calls = Shared<[String]>([])

  init(clock: VirtualClock) { self.clock = clock }

  func deliver(_ message: URLSessionWebSocketTask.Message) {
    let name = if case .string(let text) = message { text } else { "data" }
    calls.append("deliver \(name), pending \(clock.pendingCount)")
  }
  func ping() { calls.append("ping, pending \(clock.pendingCount)") }
  func close(_ code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
    calls.append("close \(code.rawValue)")
  }
  func drop() { calls.append("drop") }
}

@Suite struct WebSocketConversationTests {
  private func conversation(_ steps: [WebSocketStep], on clock: VirtualClock)
    -> WebSocketConversation
  {
    WebSocketConversation(
      subprotocol: nil, steps: steps, scheduler: Scheduler(clock: clock),
      reporter: FailureReporter(),
      site: CallSite(fileID: #fileID, filePath: #filePath, line: #line, column: #column),
      summary: "GET wss://chat.example.com/chat")
  }

  @Test func aWaitAfterASendIsScheduledBeforeTheMessageGoesToThePeer() async {
    let clock = VirtualClock()
    let peer = ClockWatchingPeer(clock: clock)
    let talk = conversation(
      [.send(.string("a")), .wait(.seconds(1)), .send(.string("b")), .ping], on: clock)
    talk.start(with: peer)
    #expect(peer.calls.current == ["deliver a, pending 1"])
    await clock.advance(by: .seconds(1))
    #expect(
      peer.calls.current == ["deliver a, pending 1", "deliver b, pending 0", "ping, pending 0"])
    #expect(talk.messages.map(\.time) == [.zero, .seconds(1)])
  }

  @Test func aSendWithoutAWaitAfterItGoesAtOnceAndAZeroWaitIsNoWait() {
    let clock = VirtualClock()
    let peer = ClockWatchingPeer(clock: clock)
    let talk = conversation(
      [.send(.string("a")), .wait(.zero), .send(.string("b")), .close(.normalClosure)],
      on: clock)
    talk.start(with: peer)
    #expect(peer.calls.current == ["deliver a, pending 0", "deliver b, pending 0", "close 1000"])
  }
}
