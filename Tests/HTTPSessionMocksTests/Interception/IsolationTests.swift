import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Mocks behind real URLSessions never see each other's requests, however many run at once.
@Suite struct IsolationTests {
  /// Swift Testing runs these cases in parallel: each has its own mock and session, and they all
  /// ask for the same URLs.
  @Test(arguments: 0..<24)
  func parallelTestsWithTheSameURLsNeverMix(index: Int) async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/same"), with: .text("\(index)"))
    mock.stub(.post("/same")) { request in .data(request.httpBody ?? Data()) }
    let session = mock.makeURLSession()
    for round in 0..<4 {
      let (data, _) = try await session.data(from: URL(string: "https://same.test/same")!)
      #expect(String(decoding: data, as: UTF8.self) == "\(index)")
      var post = URLRequest(url: URL(string: "https://same.test/same")!)
      post.httpMethod = "POST"
      post.httpBody = Data("\(index)-\(round)".utf8)
      let (echo, _) = try await session.data(for: post)
      #expect(echo == post.httpBody)
    }
    #expect(mock.requests.count == 8)
    #expect(
      mock.requests.compactMap(\.httpBody) == (0..<4).map { Data("\(index)-\($0)".utf8) })
  }

  @Test func aThousandMocksGetAThousandProtocolClasses() {
    let mocks = (0..<1000).map { _ in URLSessionMock() }
    var classes = Set<ObjectIdentifier>()
    for mock in mocks {
      let configuration = URLSessionConfiguration.ephemeral
      mock.intercept(configuration)
      if let first = configuration.protocolClasses?.first {
        classes.insert(ObjectIdentifier(first))
      }
    }
    #expect(classes.count == 1000)
  }

  @Test func twoConfigurationsForTheSameURLAnswerIndependently() async throws {
    let first = URLSessionMock()
    first.stub(.get("/whoami"), with: .text("first"))
    let second = URLSessionMock()
    second.stub(.get("/whoami"), with: .text("second"))
    let configurationA = URLSessionConfiguration.ephemeral
    first.intercept(configurationA)
    let configurationB = URLSessionConfiguration.ephemeral
    second.intercept(configurationB)
    let url = URL(string: "https://x.test/whoami")!
    let b = try await URLSession(configuration: configurationB).data(from: url).0
    let a = try await URLSession(configuration: configurationA).data(from: url).0
    #expect(String(decoding: a, as: UTF8.self) == "first")
    #expect(String(decoding: b, as: UTF8.self) == "second")
    #expect(first.requests.count == 1)
    #expect(second.requests.count == 1)
  }

  @Test func slotsAreFreshUntilTheLimitThenTheOldestFreedIsReused() {
    var slots = SlotAllocator(freshSlots: 3)
    let firstTwo = [slots.take(), slots.take()]
    #expect(firstTwo == [0, 1])
    slots.free(1)
    slots.free(0)
    #expect(slots.take() == 2)  // still under the limit: a fresh one
    #expect(slots.take() == 1)  // freed longest ago
    #expect(slots.take() == 0)
    #expect(slots.take() == 3)  // none free: fresh again
    #expect(slots.count == 4)
  }

  @Test func aReleasedMocksSlotIsNotReusedAtOnce() async throws {
    var gone: URLSessionMock? = URLSessionMock()
    gone?.stub(.any, with: .text("gone"))
    let stale = try #require(gone?.makeURLSession())
    gone = nil
    let next = URLSessionMock()
    next.stub(.any, with: .text("next"))
    let fresh = next.makeURLSession()
    let url = URL(string: "https://x.test/a")!
    await #expect { _ = try await stale.data(from: url) } throws: {
      ($0 as? URLError)?.code == .resourceUnavailable
    }
    #expect(try await fresh.data(from: url).0 == Data("next".utf8))
    #expect(next.requests.count == 1)
  }
}
