import Foundation
import HTTPSessionKit
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// What an app writes, in a package that depends on HTTPSessionKit and HTTPSessionMocks:
// `.ci/apple-standin` compiles this file (never runs it) beside its stand-in of Apple's
// Foundation, where every call on `URLSession` must resolve to Foundation's own method, as it
// did before the app added the package, and `URLSession` must still be an `HTTPSession`.

/// Foundation's async methods without a task delegate, called on `URLSession` by name.
func foundationCalls(
  _ session: URLSession, request: URLRequest, url: URL, body: Data, file: URL
) async throws {
  let _: (Data, URLResponse) = try await session.data(for: request)
  let _: (Data, URLResponse) = try await session.data(from: url)
  let _: (Data, URLResponse) = try await session.upload(for: request, from: body)
  let _: (Data, URLResponse) = try await session.upload(for: request, fromFile: file)
  let _: (URL, URLResponse) = try await session.download(for: request)
  let _: (URL, URLResponse) = try await session.download(from: url)
  let _: (Data, URLResponse) = try await URLSession.shared.data(for: request)
  let _: (Data, URLResponse) = try await URLSession.shared.data(from: url)
  let _: (Data, URLResponse) = try await URLSession.shared.upload(for: request, from: body)
}

/// The same calls written with their `delegate:` arguments.
func foundationCallsWithDelegates(
  _ session: URLSession, request: URLRequest, url: URL, body: Data,
  delegate: (any URLSessionTaskDelegate)?
) async throws {
  let _: (Data, URLResponse) = try await session.data(for: request, delegate: delegate)
  let _: (Data, URLResponse) = try await session.data(from: url, delegate: delegate)
  let _: (Data, URLResponse) = try await session.upload(
    for: request, from: body, delegate: delegate)
  let _: (URL, URLResponse) = try await session.download(for: request, delegate: delegate)
}

/// The methods that HTTPSessionKit adds to `URLSession` by name.
func packageCalls(_ session: URLSession, request: URLRequest, url: URL) async throws {
  let _: (HTTPByteStream, URLResponse) = try await session.stream(for: request)
  let _: any HTTPWebSocketTask = session.webSocket(with: request)
  let _: any HTTPWebSocketTask = session.webSocket(with: url)
}

/// The same calls through the package's protocol, as production code makes them.
func protocolCalls(
  _ session: any HTTPSession, request: URLRequest, url: URL, body: Data
) async throws {
  let _: (Data, URLResponse) = try await session.data(for: request)
  let _: (Data, URLResponse) = try await session.data(from: url)
  let _: (Data, URLResponse) = try await session.upload(for: request, from: body)
  let _: (URL, URLResponse) = try await session.download(for: request)
  let _: (HTTPByteStream, URLResponse) = try await session.stream(for: request)
}

/// Generic code over the protocol, with `URLSession` and a double.
func genericCalls<Session: HTTPSession>(_ session: Session, url: URL) async throws -> Data {
  try await session.data(from: url).0
}

/// `URLSession.shared` and a mock where production code and tests put them.
func injection(url: URL) async throws {
  let production: any HTTPSession = URLSession.shared
  _ = try await genericCalls(URLSession.shared, url: url)
  _ = try await genericCalls(URLSessionMock(), url: url)
  _ = try await production.data(from: url)
}

/// An app's own protocol for the session, which `URLSession` met before the app added the
/// package, with Foundation's methods.
protocol AppHTTPClient: Sendable {
  func data(for request: URLRequest) async throws -> (Data, URLResponse)
  func data(from url: URL) async throws -> (Data, URLResponse)
  func upload(for request: URLRequest, from bodyData: Data) async throws -> (Data, URLResponse)
}

extension URLSession: AppHTTPClient {}
