import Foundation
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A `URLProtocolClient` that records what a protocol tells it, in order, from any thread, as
/// URL loading would receive it.
final class RecordingClient: NSObject, URLProtocolClient, Sendable {
  enum Call: Equatable, Sendable {
    /// `wasRedirectedTo`: the follow-up request, as `METHOD URL`.
    case redirect(String)
    /// `didReceive`: the response's status code.
    case response(Int)
    case load(Data)
    case finish
    case fail(URLError.Code?)

    /// Whether the call ends the load.
    var isEnd: Bool {
      switch self {
      case .finish, .fail: true
      default: false
      }
    }
  }

  private let log = Shared<[Call]>([])
  private let ends: AsyncStream<Void>
  private let endOutlet: AsyncStream<Void>.Continuation

  override init() {
    (ends, endOutlet) = AsyncStream<Void>.makeStream()
    super.init()
  }

  /// The calls so far, in order.
  var calls: [Call] { log.current }

  /// Waits until the protocol has ended the load (`urlProtocolDidFinishLoading` or
  /// `didFailWithError`).
  func waitForEnd() async {
    var iterator = ends.makeAsyncIterator()
    _ = await iterator.next()
  }

  private func note(_ call: Call) {
    log.append(call)
    if call.isEnd { endOutlet.yield() }
  }

  func urlProtocol(
    _ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse
  ) { note(.redirect("\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "")")) }
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
