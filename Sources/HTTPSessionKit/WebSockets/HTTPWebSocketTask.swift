import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The part of `URLSessionWebSocketTask` that clients use, as a protocol that test doubles can
/// adopt: `URLSessionWebSocketTask` satisfies it as it is.
///
/// ``HTTPSession/webSocket(with:)-(URLRequest)`` hands one out. `URLSessionWebSocketTask`
/// cannot be made or subclassed outside Foundation (its `send` and `receive` are not `open`),
/// so code that depends on this protocol instead is the code a test can drive:
///
/// ```swift
/// let socket = session.webSocket(with: URL(string: "wss://chat.example.com/room")!)
/// socket.resume()
/// try await socket.send(.string("hello"))
/// let reply = try await socket.receive()
/// ```
///
/// The messages and close codes are `URLSessionWebSocketTask`'s own types.
public protocol HTTPWebSocketTask: AnyObject, Sendable {
  /// Starts the task: opens the connection and performs the opening handshake.
  func resume()
  /// Cancels the task without a close frame, as `URLSessionTask.cancel()` does.
  func cancel()
  /// Sends a message; throws when the connection has failed or closed.
  func send(_ message: URLSessionWebSocketTask.Message) async throws
  /// Waits for the next message; throws when the connection fails or closes (then
  /// ``closeCode`` says how).
  func receive() async throws -> URLSessionWebSocketTask.Message
  /// Sends a ping; `pongReceiveHandler` is called once, with `nil` when the pong arrives or
  /// with the error that prevented it.
  func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void)
  /// Closes the connection with a close frame carrying `closeCode` and `reason`.
  func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
  /// The close code the connection closed with; `.invalid` while it is open.
  var closeCode: URLSessionWebSocketTask.CloseCode { get }
  /// The reason the connection closed with, if the close frame carried one.
  var closeReason: Data? { get }
  /// The largest message ``receive()`` accepts, in bytes; a larger one fails the connection.
  var maximumMessageSize: Int { get set }
  /// Whether the task is running, suspended, closing or completed.
  var state: URLSessionTask.State { get }
}

/// `URLSessionWebSocketTask` is the production ``HTTPWebSocketTask``: every requirement is its
/// own method or property.
///
/// > Note: On Linux, corelibs Foundation's `URLSessionWebSocketTask` exists but fails every
/// > connection at `resume()` with `URLError(.unsupportedURL)` ("WebSockets not supported by
/// > libcurl"): its libcurl support is compiled out of the toolchain. Code that uses WebSockets
/// > on Linux needs another client; its tests can still inject a double.
extension URLSessionWebSocketTask: HTTPWebSocketTask {}
