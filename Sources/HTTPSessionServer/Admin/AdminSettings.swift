import Foundation
import HTTPSessionMocksRuntime

/// How the admin API of a served mock is set up beyond `startServer(admin: true)`: what the
/// `stub-server` command passes.
package struct AdminSettings: Sendable {
  /// The WireMock root the server started from (a folder holding `mappings/`), where
  /// `POST /__admin/mappings/save` writes; `nil`: save answers an error.
  package var rootDirectory: URL?
  /// The mappings the server starts with, and that `POST /__admin/reset` goes back to (a
  /// WireMock root's); the admin API adds them to the mock.
  package var mappings: [WireMockMapping] = []
  /// Run after `POST /__admin/shutdown` has been answered; `nil` stops the server.
  package var onShutdown: (@Sendable () -> Void)?
  /// Whether the journal keeps nothing (`--no-request-journal`): request queries answer as
  /// WireMock's do then, with `requestJournalDisabled: true`.
  package var requestJournalDisabled = false
  /// Whether every mapping, those added through the API later included, is a response
  /// template (`--global-response-templating`), as WireMock templates them.
  package var templatesEveryResponse = false

  /// Settings with no root folder, stopping the server on shutdown.
  package init(
    rootDirectory: URL? = nil, mappings: [WireMockMapping] = [],
    onShutdown: (@Sendable () -> Void)? = nil,
    requestJournalDisabled: Bool = false, templatesEveryResponse: Bool = false
  ) {
    self.rootDirectory = rootDirectory
    self.mappings = mappings
    self.onShutdown = onShutdown
    self.requestJournalDisabled = requestJournalDisabled
    self.templatesEveryResponse = templatesEveryResponse
  }
}
