import Foundation
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The bridge's sink, driven directly: the URLProtocol client calls an answer becomes, for Apple's
/// URL loading and for corelibs' alike (``URLLoadingTraits``), whichever platform runs the tests.
@Suite struct ProtocolSinkTests {
  private static let both: [URLLoadingTraits] = [.apple, .corelibs]

  private func makeSink(
    _ traits: URLLoadingTraits,
    for request: URLRequest = URLRequest(url: URL(string: "https://x.test/a")!)
  ) -> (ProtocolSink, RecordingClient) {
    let client = RecordingClient()
    let urlProtocol = URLProtocol(request: request, cachedResponse: nil, client: client)
    return (ProtocolSink(protocol: urlProtocol, request: request, traits: traits), client)
  }

  private func response(_ status: Int, headers: [String: String] = [:]) -> HTTPURLResponse {
    HTTPURLResponse(
      url: URL(string: "https://x.test/a")!, statusCode: status, httpVersion: "HTTP/1.1",
      headerFields: headers)!
  }

  // MARK: - Bodies

  @Test(arguments: both)
  func aSessionWithADataDelegateGetsEachPieceAsItComes(traits: URLLoadingTraits) {
    let request = URLRequest(url: URL(string: "https://x.test/a")!)
    let client = RecordingClient()
    let urlProtocol = URLProtocol(request: request, cachedResponse: nil, client: client)
    let sink = ProtocolSink(
      protocol: urlProtocol, request: request, traits: traits, deliversPieces: true)
    sink.receive(response(200))
    for piece in ["ab", "cd"] { sink.receive(Data(piece.utf8)) }
    sink.finish(.complete)

    #expect(
      client.calls == [.response(200), .load(Data("ab".utf8)), .load(Data("cd".utf8)), .finish])
  }

  @Test(arguments: both)
  func aBodyInPiecesReachesTheClientAsThePlatformKeepsIt(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.receive(response(200))
    for piece in ["ab", "cd", "ef"] { sink.receive(Data(piece.utf8)) }
    sink.finish(.complete)
    if traits.keepsOnlyLastPiece {
      // Each didLoad would overwrite the body a handler gets: one piece, at the end.
      #expect(client.calls == [.response(200), .load(Data("abcdef".utf8)), .finish])
    } else {
      #expect(
        client.calls == [
          .response(200), .load(Data("ab".utf8)), .load(Data("cd".utf8)), .load(Data("ef".utf8)),
          .finish,
        ])
    }
  }

  @Test(arguments: both)
  func aWholeAnswerIsOneResponseOneLoadOneEnd(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.receiveWhole(response(200), Data("xyz".utf8), .complete)
    #expect(client.calls == [.response(200), .load(Data("xyz".utf8)), .finish])
  }

  @Test(arguments: both)
  func anEmptyBodyIsNoLoad(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.receive(response(200))
    sink.receive(Data())
    sink.finish(.complete)
    sink.receiveWhole(response(204), Data(), .complete)
    #expect(client.calls == [.response(200), .finish])
  }

  @Test(arguments: both)
  func aFailureIsOneDidFail(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.finish(.failed(URLError(.timedOut)))
    sink.finish(.complete)
    #expect(client.calls == [.fail(.timedOut)])
  }

  @Test(arguments: both)
  func nothingReachesTheClientAfterStopLoading(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.receive(response(200))
    sink.receive(Data("ab".utf8))
    sink.stop()
    sink.receive(Data("cd".utf8))
    sink.finish(.failed(URLError(.cancelled)))
    if traits.keepsOnlyLastPiece {
      #expect(client.calls == [.response(200)])  // the piece held back is dropped
    } else {
      #expect(client.calls == [.response(200), .load(Data("ab".utf8))])
    }
  }

  // MARK: - Redirects

  @Test(arguments: both)
  func aRedirectIsReportedThenDeliveredWithItsBody(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.receiveWhole(
      response(302, headers: ["Location": "/b"]), Data("moved".utf8), .complete)
    let answer: [RecordingClient.Call] = [.response(302), .load(Data("moved".utf8)), .finish]
    if traits.followsRedirectsThroughClient {
      // URL loading asks the delegate; one that refuses the redirect gets this 3xx and its body.
      #expect(client.calls == [.redirect("GET https://x.test/b")] + answer)
    } else {
      #expect(client.calls == answer)  // corelibs' wasRedirectedTo traps: the mock follows
    }
  }

  @Test(arguments: both)
  func aRedirectInPiecesIsReportedBeforeItsResponse(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.receive(response(307, headers: ["Location": "https://y.test/c"]))
    sink.receive(Data("mo".utf8))
    sink.receive(Data("ved".utf8))
    sink.finish(.complete)
    switch (traits.followsRedirectsThroughClient, traits.keepsOnlyLastPiece) {
    case (true, false):
      #expect(
        client.calls == [
          .redirect("GET https://y.test/c"), .response(307), .load(Data("mo".utf8)),
          .load(Data("ved".utf8)), .finish,
        ])
    case (false, true):
      #expect(client.calls == [.response(307), .load(Data("moved".utf8)), .finish])
    default:
      Issue.record("no platform has \(traits)")
    }
  }

  @Test func theFollowUpOfA303AfterAPostIsAGet() {
    var post = URLRequest(url: URL(string: "https://x.test/form")!)
    post.httpMethod = "POST"
    post.httpBody = Data("a=1".utf8)
    let (sink, client) = makeSink(.apple, for: post)
    sink.receiveWhole(response(303, headers: ["Location": "/done"]), nil, .complete)
    #expect(client.calls == [.redirect("GET https://x.test/done"), .response(303), .finish])
  }

  @Test(arguments: both)
  func a3xxWithoutALocationIsNoRedirect(traits: URLLoadingTraits) {
    let (sink, client) = makeSink(traits)
    sink.receiveWhole(response(304), nil, .complete)
    #expect(client.calls == [.response(304), .finish])
  }

  @Test func thisPlatformsURLLoadingIsCorelibs() {
    // The traits this package runs with here, which the core's redirect rule for the bridge
    // also reads (DoorTraits.followsRedirects): Linux's URL loading.
    #if canImport(FoundationNetworking)
      #expect(URLLoadingTraits.current == .corelibs)
      #expect(DoorTraits.urlProtocol.followsRedirects)
    #else
      #expect(URLLoadingTraits.current == .apple)
      #expect(!DoorTraits.urlProtocol.followsRedirects)
    #endif
  }
}
