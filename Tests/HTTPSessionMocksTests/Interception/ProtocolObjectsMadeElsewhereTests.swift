import Foundation
import HTTPSessionKit
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Reports of a mock's bridge when URL loading makes the protocol object away from the test's
/// task, as Apple's URL loading always does (on the session's queue).
///
/// Corelibs makes it inside the task's `resume()`, on the test's own task, unless the
/// configuration has a URL cache: then it makes it on a background thread after the cache
/// lookup. These tests load as Apple does, through a configuration with a URL cache, or by making
/// the protocol object on a thread of their own. Each mock is made outside the capture scope,
/// so that only the test context that the bridge carries brings a report into the scope.
@Suite struct ProtocolObjectsMadeElsewhereTests {
  @Test func aSessionWithAURLCacheAnswersAndReportsInTheTest() async {
    let mock = URLSessionMock()
    mock.stub(.get("/known"), with: .text("known"))
    let reports = await capturedReports {
      let session = sessionWithAURLCache(for: mock)
      let known = await Seen.sending(request("GET", "https://x.test/known"), through: session)
      #expect(known.body == Data("known".utf8))
      let unknown = await Seen.sending(request("GET", "https://x.test/unknown"), through: session)
      #expect(unknown.errorCode == .resourceUnavailable)
    }
    #expect(reports.map(\.severity) == [.failure])
    #expect(reports.first?.message.contains("No stub matches GET https://x.test/unknown") == true)
  }

  @Test func aProtocolObjectMadeOnAThreadOfItsOwnReportsInTheTest() async throws {
    let mock = URLSessionMock()
    mock.stub(.get("/known"), with: .text("known"))
    let answered = RecordingClient()
    let refused = RecordingClient()
    let reports = await capturedReports {
      mock.intercept(.ephemeral)
      await loadOnAThreadOfItsOwn(request("GET", "https://x.test/known"), by: mock, answered)
      await loadOnAThreadOfItsOwn(request("GET", "https://x.test/unknown"), by: mock, refused)
    }
    #expect(answered.calls == [.response(200), .load(Data("known".utf8)), .finish])
    #expect(refused.calls == [.fail(.resourceUnavailable)])
    #expect(reports.map(\.severity) == [.failure])
    #expect(reports.first?.message.contains("No stub matches GET https://x.test/unknown") == true)
  }

  /// Swift Testing runs these cases in parallel: each must get its own report, and only it.
  @Test(arguments: 0..<8)
  func parallelTestsWithURLCachesEachGetTheirOwnReport(index: Int) async {
    let mock = URLSessionMock()
    let reports = await capturedReports {
      let session = sessionWithAURLCache(for: mock)
      let url = "https://x.test/parallel/\(index)"
      #expect(await Seen.sending(request("GET", url), through: session).errorCode != nil)
    }
    #expect(reports.count == 1)
    #expect(reports.allSatisfy { $0.message.contains("GET https://x.test/parallel/\(index)\n") })
  }

  /// Swift Testing runs these cases in parallel: each must get its own report, and only it.
  @Test(arguments: 0..<8)
  func parallelProtocolObjectsMadeOnThreadsEachReportInTheirOwnTest(index: Int) async {
    let mock = URLSessionMock()
    let client = RecordingClient()
    let reports = await capturedReports {
      mock.intercept(.ephemeral)
      let url = "https://x.test/threads/\(index)"
      await loadOnAThreadOfItsOwn(request("GET", url), by: mock, client)
    }
    #expect(client.calls == [.fail(.resourceUnavailable)])
    #expect(reports.count == 1)
    #expect(reports.allSatisfy { $0.message.contains("GET https://x.test/threads/\(index)\n") })
  }

  @Test func theLastScopeToRouteAConfigurationToTheMockGetsItsReports() async {
    let mock = URLSessionMock()
    let earlier = capturedReports {
      mock.intercept(.ephemeral)
    }
    let later = await capturedReports {
      let session = sessionWithAURLCache(for: mock)
      _ = await Seen.sending(request("GET", "https://x.test/later"), through: session)
    }
    #expect(earlier.isEmpty)
    #expect(later.count == 1)
    #expect(later.first?.message.contains("GET https://x.test/later") == true)
  }

  // MARK: - Helpers

  /// A session routed to `mock` whose configuration has a URL cache, so that corelibs makes the
  /// protocol object on a background thread, after the cache lookup.
  private func sessionWithAURLCache(for mock: URLSessionMock) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    mock.intercept(configuration)  // turns the cache off; put one back
    configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
    return URLSession(configuration: configuration)
  }

  /// Makes the protocol object of `mock`'s bridge for `request` on a thread of its own and
  /// starts it there, as Apple's URL loading does on the session's queue, and waits until it
  /// has told `client` how the load ended.
  private func loadOnAThreadOfItsOwn(
    _ request: URLRequest, by mock: URLSessionMock, _ client: RecordingClient
  ) async {
    guard let slot = mock.bridgeSlot.withLock({ $0 }) else {
      Issue.record("the mock has no bridge class: call intercept(_:) first")
      return
    }
    Thread {
      func make<Tag: BridgeTag>(_: Tag.Type) -> URLProtocol {
        Bridge<Tag>(request: request, cachedResponse: nil, client: client)
      }
      let loader = make(BridgeTable.tag(for: slot))
      loader.startLoading()
    }.start()
    await client.waitForEnd()
  }
}
