import Foundation
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a URLProtocol client was told, in order.
private final class ClientLog: NSObject, URLProtocolClient, @unchecked Sendable {
  // @unchecked Sendable: `calls` is only touched while `lock` is held.
  enum Call: Equatable {
    case response(Int)
    case load(Data)
    case finish
    case fail(URLError.Code?)
    case redirect(String)
  }

  private let lock = NSLock()
  private var log: [Call] = []
  var calls: [Call] { lock.withLock { log } }

  private func note(_ call: Call) { lock.withLock { log.append(call) } }

  func urlProtocol(
    _ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse
  ) { note(.redirect(request.url?.absoluteString ?? "")) }
  func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse)
  {}
  func urlProtocol(
    _ protocol: URLProtocol, didReceive response: URLResponse,
    cacheStoragePolicy policy: URLCache.StoragePolicy
  ) { note(.response((response as? HTTPURLResponse)?.statusCode ?? -1)) }
  func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) { note(.load(data)) }
  func urlProtocolDidFinishLoading(_ protocol: URLProtocol) { note(.finish) }
  func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {
    note(.fail((error as? URLError)?.code))
  }
  func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {}
  func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}
}

/// The bridge's sink, driven directly: how the pieces of an answer reach URL loading.
@Suite struct ProtocolSinkTests {
  private let url = URL(string: "https://x.test/a")!

  private func makeSink() -> (ProtocolSink, ClientLog) {
    let client = ClientLog()
    let request = URLRequest(url: url)
    let urlProtocol = URLProtocol(request: request, cachedResponse: nil, client: client)
    return (ProtocolSink(protocol: urlProtocol, request: request), client)
  }

  private var ok: HTTPURLResponse {
    HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
  }

  @Test func aBodyInPiecesReachesTheClientWhole() {
    let (sink, client) = makeSink()
    sink.receive(ok)
    for piece in ["ab", "cd", "ef"] { sink.receive(Data(piece.utf8)) }
    sink.finish(.complete)
    #if canImport(FoundationNetworking)
      // Corelibs keeps only the last didLoad for handler tasks: one piece, at the end.
      #expect(client.calls == [.response(200), .load(Data("abcdef".utf8)), .finish])
    #else
      #expect(
        client.calls == [
          .response(200), .load(Data("ab".utf8)), .load(Data("cd".utf8)), .load(Data("ef".utf8)),
          .finish,
        ])
    #endif
  }

  @Test func aWholeAnswerIsOneResponseOneLoadOneEnd() {
    let (sink, client) = makeSink()
    sink.receiveWhole(ok, Data("xyz".utf8), .complete)
    #expect(client.calls == [.response(200), .load(Data("xyz".utf8)), .finish])
  }

  @Test func anEmptyBodyIsNoLoad() {
    let (sink, client) = makeSink()
    sink.receive(ok)
    sink.receive(Data())
    sink.finish(.complete)
    #expect(client.calls == [.response(200), .finish])
  }

  @Test func aFailureIsOneDidFail() {
    let (sink, client) = makeSink()
    sink.finish(.failed(URLError(.timedOut)))
    sink.finish(.complete)
    #expect(client.calls == [.fail(.timedOut)])
  }

  @Test func nothingReachesTheClientAfterStopLoading() {
    let (sink, client) = makeSink()
    sink.receive(ok)
    sink.receive(Data("ab".utf8))
    sink.stop()
    sink.receive(Data("cd".utf8))
    sink.finish(.failed(URLError(.cancelled)))
    #if canImport(FoundationNetworking)
      #expect(client.calls == [.response(200)])
    #else
      #expect(client.calls == [.response(200), .load(Data("ab".utf8))])
    #endif
  }
}
