import Foundation
import HTTPSessionMocks

extension AdminAPI {
  /// The mappings endpoints, or `nil` when `call` is not one of them.
  func mappingReply(to call: AdminCall) -> Reply? {
    nil
  }

  /// The mappings back to those the server started with.
  func resetMappings() {}

  /// Every scenario back to its start.
  func resetScenarios() {
    mock.scenarioState = URLSessionMock.initialScenarioState
  }
}
