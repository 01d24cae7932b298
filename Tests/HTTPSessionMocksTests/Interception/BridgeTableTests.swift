import Foundation
import Testing

@testable import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The test context a mock's bridge slot keeps for protocol objects made where no test runs:
/// how long it lives, and which one it is.
@Suite struct BridgeTableTests {
  @Test func theContextEndsWithTheMock() throws {
    var mock: URLSessionMock? = URLSessionMock()
    mock?.intercept(.ephemeral)
    let context = try #require(weakContext(of: mock))
    mock = nil
    #expect(context.object == nil)
  }

  @Test func aCaptureInATestReplacesTheContextAndOneOutsideKeepsIt() async throws {
    let mock = URLSessionMock()
    mock.intercept(.ephemeral)
    let first = try #require(weakContext(of: mock))
    mock.intercept(.ephemeral)
    #expect(first.object == nil)
    let second = try #require(weakContext(of: mock))
    // A detached task carries no test: there is nothing to capture, and the test's stays.
    await Task.detached { mock.intercept(.ephemeral) }.value
    #expect(second.object != nil)
    #expect(weakContext(of: mock)?.object === second.object)
  }

  @Test func theContextDoesNotKeepTheMocksOfAVerifyingScopeAlive() {
    // The scope of `.verifyingMocks` holds its mocks; a context carrying it would hold the scope
    // for as long as the mock lives, and the mock would never go.
    let (mock, context) = MockVerificationScope.$current.withValue(MockVerificationScope()) {
      let mock = URLSessionMock()
      mock.intercept(.ephemeral)
      return (WeakReference(mock), weakContext(of: mock))
    }
    #expect(context != nil)
    #expect(mock.object == nil)
    #expect(context?.object == nil)
  }

  /// The test context in the bridge slot of `mock`, held weakly.
  private func weakContext(of mock: URLSessionMock?) -> WeakReference<TestContextRelay>? {
    guard let slot = mock?.bridgeSlot.withLock({ $0 }) else { return nil }
    return BridgeTable.context(inSlot: slot).map { WeakReference($0) }
  }
}
