import Dispatch
import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// An upgraded connection (RFC 6455): runs on the connection's thread from the `101` to the
/// socket's end, and is the ``WebSocketPeer`` a stub's script talks to.
///
/// The thread reads the client's frames (``WebSocketFrameParser``), joins them into messages
/// (``WebSocketMessageAssembler``) and tells the conversation what the client did; it answers
/// pings with pongs and echoes the client's close. What the script does (deliver, ping, close,
/// drop) may come from any thread (a test advancing a `VirtualClock`): it is queued, and the
/// connection's thread, woken, writes it. That thread is the only writer, so frames never
/// interleave and no other thread ever blocks on the socket.
///
/// A frame that breaks the protocol is answered with a close frame of its code (1002, 1007,
/// 1009), after which the server closes its side at once; the server's ``Connection/stop()``
/// and a script's close send a close frame (1001, or the script's code) too. After the
/// server's close the thread waits for the client's (or the end of its stream), at most
/// ``ServerLimits/lingerTimeout``, then closes the socket. A client that sends nothing for half
/// of ``ServerLimits/webSocketIdleTimeout`` is pinged, and one silent for all of it is closed
/// with 1001.
final class WebSocketSession: WebSocketPeer, @unchecked Sendable {
  // @unchecked Sendable: `outbox` and `closed` are only touched with `lock` held; every other
  // field belongs to the connection's thread, the only one that calls `run`.

  /// What the script asked for, in its order.
  private enum Command {
    case frame(WebSocketFrame)
    case close(UInt16?, [UInt8])
    case drop
  }

  private let fd: Int32
  private let wake: WakeSignal
  private let limits: ServerLimits
  private let handler: any ExchangeHandler
  private let write: ([UInt8]) -> Bool
  private let isStopping: () -> Bool
  /// What other threads touch: the commands queued for the connection's thread.
  private struct Shared {
    var outbox: [Command] = []
    /// Set once the thread left `run`: the descriptors may be closed, nothing is queued.
    var closed = false
  }
  private let shared = Locked(Shared())
  private var parser: WebSocketFrameParser
  private var assembler: WebSocketMessageAssembler
  private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

  /// A session on the socket `fd`, woken through `wake`; `write` writes every byte (or
  /// fails), `isStopping` tells whether the server stops.
  init(
    fd: Int32, wake: WakeSignal, limits: ServerLimits, handler: any ExchangeHandler,
    write: @escaping ([UInt8]) -> Bool, isStopping: @escaping () -> Bool
  ) {
    self.fd = fd
    self.wake = wake
    self.limits = limits
    self.handler = handler
    self.write = write
    self.isStopping = isStopping
    let maximum = limits.maxWebSocketMessageBytes
    parser = WebSocketFrameParser(maximumFrameSize: maximum)
    assembler = WebSocketMessageAssembler(maximumMessageSize: maximum)
  }

  // MARK: - WebSocketPeer (any thread)

  func deliver(_ message: URLSessionWebSocketTask.Message) {
    switch message {
    case .string(let text): enqueue(.frame(WebSocketFrame(.text, Array(text.utf8))))
    case .data(let data): enqueue(.frame(WebSocketFrame(.binary, Array(data))))
    @unknown default: enqueue(.frame(WebSocketFrame(.binary)))
    }
  }

  func ping() { enqueue(.frame(WebSocketFrame(.ping))) }

  func close(_ code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
    // A code that may not go on the wire (`.invalid`, 1005, 1006, 1015) closes without one.
    let raw = UInt16(exactly: code.rawValue).flatMap {
      WebSocketMessageAssembler.isValidCloseCode($0) ? $0 : nil
    }
    enqueue(.close(raw, Self.closeReason(reason.map { Array($0) } ?? [])))
  }

  func drop() { enqueue(.drop) }

  private func enqueue(_ command: Command) {
    shared.withLock { shared in
      guard !shared.closed else { return }
      shared.outbox.append(command)
      // Under the lock, so that the descriptors cannot close in between.
      wake.wake()
    }
  }

  // MARK: - The connection's thread

  private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

  /// Serves the upgraded connection until it ends; `leftover` are the bytes that came after
  /// the upgrade request. The socket is the caller's to close.
  func run(_ conversation: WebSocketConversation, leftover: [UInt8]) {
    parser.append(leftover)
    defer {
      shared.withLock { shared in
        shared.closed = true
        shared.outbox = []
      }
      conversation.connectionLost()
    }
    // The journal's caps apply to the messages, and unread ones wait within the message
    // limit (see `WebSocketConversation.Bounds`).
    conversation.bound(
      WebSocketConversation.Bounds(
        recordedBytes: limits.maxJournalBodyBytes, recordedMessages: limits.maxJournalExchanges,
        unreadBytes: limits.maxWebSocketMessageBytes))
    handler.reporting { conversation.start(with: self) }
    /// When the server's close went out: until when it waits for the client's.
    var closing: UInt64?
    /// Set after a frame broke the protocol: what the client sends is discarded.
    var failed = false
    let lingering = Self.nanoseconds(limits.lingerTimeout)
    let idle = max(Self.nanoseconds(limits.webSocketIdleTimeout), 2)
    /// When the client last sent a byte, and whether the server pinged it since.
    var lastHeard = Self.now()
    var pinged = false
    func sendClose(_ code: UInt16?, _ reason: [UInt8]) -> Bool {
      closing = Self.now() + lingering
      return write(WebSocketFrame.close(code, reason: reason).encoded())
    }
    while true {
      let commands = shared.withLock { shared in
        defer { shared.outbox = [] }
        return shared.outbox
      }
      for command in commands where closing == nil {
        switch command {
        case .frame(let frame):
          guard write(frame.encoded()) else { return }
        case .close(let code, let reason):
          guard sendClose(code, reason) else { return }
        case .drop:
          // The connection breaks: no close frame, the socket closes.
          return
        }
      }
      if closing == nil, isStopping() {
        let reason = Array("the server is stopping".utf8)
        conversation.doorClosed(.goingAway, reason: Data(reason))
        guard sendClose(1001, reason) else { return }
      }
      if !failed {
        do {
          while let frame = try parser.next() {
            guard let event = try assembler.add(frame) else { continue }
            switch event {
            case .text(let text):
              if closing == nil { handler.reporting { conversation.clientSent(.string(text)) } }
            case .binary(let bytes):
              if closing == nil {
                handler.reporting { conversation.clientSent(.data(Data(bytes))) }
              }
            case .ping(let payload):
              if closing == nil {
                guard write(WebSocketFrame(.pong, payload).encoded()) else { return }
              }
            case .pong:
              break
            case .close(let code, let reason):
              let closeCode: URLSessionWebSocketTask.CloseCode =
                code.map { URLSessionWebSocketTask.CloseCode(rawValue: Int($0)) ?? .invalid }
                ?? .noStatusReceived
              let data = reason.isEmpty ? nil : Data(reason.utf8)
              handler.reporting { conversation.clientClosed(closeCode, reason: data) }
              // The client's close, or its answer to ours: echo its code, then the TCP close.
              if closing == nil { _ = write(WebSocketFrame.close(code).encoded()) }
              return
            }
            // A message may have made the script send, ping or close: written before more
            // frames are read.
            if shared.withLock({ !$0.outbox.isEmpty }) { break }
          }
        } catch {
          failed = true
          if closing == nil {
            let reason = Self.closeReason(Array(error.description.utf8))
            conversation.doorClosed(
              URLSessionWebSocketTask.CloseCode(rawValue: Int(error.closeCode)) ?? .protocolError,
              reason: Data(reason))
            guard sendClose(error.closeCode, reason) else { return }
          }
          // The client's frames can no longer be read, its close included: the server closes
          // its side now, and the client, seeing the end, closes too (RFC 6455 §7.1.7).
          Socket.shutdownWrite(fd)
        }
      }
      if shared.withLock({ !$0.outbox.isEmpty }) { continue }
      let now = Self.now()
      if closing == nil, now - lastHeard >= idle {
        let reason = Array("no frame from the client for \(limits.webSocketIdleTimeout)".utf8)
        conversation.doorClosed(.goingAway, reason: Data(reason))
        guard sendClose(1001, Self.closeReason(reason)) else { return }
      } else if closing == nil, !pinged, now - lastHeard >= idle / 2 {
        pinged = true
        guard write(WebSocketFrame(.ping).encoded()) else { return }
      }
      let deadline = closing ?? (lastHeard + (pinged ? idle : idle / 2))
      guard now < deadline || closing == nil else { return }
      let timeout = Int32(clamping: (deadline > now ? deadline - now : 0) / 1_000_000 + 1)
      let ready = Socket.poll(
        [(fd, Int16(POLLIN)), (wake.readDescriptor, Int16(POLLIN))], timeout: timeout)
      if ready[1] != 0 { wake.drain() }
      guard ready[0] != 0 else { continue }
      switch readBuffer.withUnsafeMutableBytes({ Socket.receive(fd, into: $0) }) {
      case .closed: return
      case .wouldBlock: continue
      case .bytes(let count):
        lastHeard = Self.now()
        pinged = false
        if !failed { parser.append(readBuffer[0..<count]) }
      }
    }
  }

  /// `reason` cut to the 123 bytes a close frame has room for, at a character's boundary.
  static func closeReason(_ reason: [UInt8]) -> [UInt8] {
    guard reason.count > 123 else { return reason }
    var end = 123
    // Back over continuation bytes (10xxxxxx) to the start of the character cut in two.
    while end > 0, reason[end] & 0xC0 == 0x80 { end -= 1 }
    return Array(reason[0..<end])
  }

  private static func nanoseconds(_ duration: Duration) -> UInt64 {
    duration.deadlineNanoseconds
  }
}
