/// What the core needs to know of the door a request came through, handed to it with the
/// request, so that the core never names a door.
///
/// Each door brings its own value (``injected``, ``urlProtocol``, ``server``); the core reads
/// only the traits. A new door is a new value: nothing in the core switches on which door it is.
/// The value is plain data (no references), so that storing it in each task costs a copy and
/// no reference counting.
package struct DoorTraits: Sendable {
  /// The door's name, which the journal records on each ``Exchange`` (user-visible).
  package var door: Door
  /// Whether the mock follows a stub's redirect itself, as URLSession would for the code under
  /// test, rather than handing it to the door's client.
  package var followsRedirects: Bool
  /// Whether the door sees an upload task's body. URL loading never shows a URLProtocol an
  /// upload task's body: an unmatched report says so when a stub missed on the body.
  package var seesUploadBody: Bool
  /// Whether the request's own timeout (`URLRequest.timeoutInterval`) applies. A request off
  /// the wire carries Foundation's default, which its client never sent, and its client times
  /// out on its own side.
  package var hasRequestTimeout: Bool
  /// The timeouts of the session configuration the request came through, where the door knows
  /// them (the URLProtocol bridge of a configuration routed with `intercept(_:)`); `nil` for
  /// none.
  var configuredLimits: TimeLimits?
  /// How the unmatched-request report words what the client received.
  package var unmatchedOutcome: StaticString
  /// Whether an unmatched report that missed on a header notes that the configuration's
  /// additional headers may be unseen.
  package var notesConfigurationHeaders: Bool
  /// Whether an unmatched report that missed on the origin notes the origin the stub expected
  /// (a request that reached the loopback server under the server's own address).
  package var notesMissedOrigin: Bool

  /// The double itself, injected as an `HTTPSession` (and a forward to one of our doubles).
  package static let injected = DoorTraits(
    door: .injected, followsRedirects: true, seesUploadBody: true, hasRequestTimeout: true,
    configuredLimits: nil,
    unmatchedOutcome: "The code under test received URLError(.resourceUnavailable).",
    notesConfigurationHeaders: false, notesMissedOrigin: false)

  /// The URLProtocol bridge. It hands redirects to URL loading on Apple platforms
  /// (`wasRedirectedTo`), and follows them itself on Linux, where swift-corelibs-foundation's
  /// `wasRedirectedTo` is a `fatalError`.
  package static let urlProtocol = DoorTraits(
    door: .urlProtocol,
    followsRedirects: !URLLoadingTraits.current.followsRedirectsThroughClient,
    seesUploadBody: false, hasRequestTimeout: true, configuredLimits: nil,
    unmatchedOutcome: "The code under test received URLError(.resourceUnavailable).",
    notesConfigurationHeaders: true, notesMissedOrigin: false)

  /// The loopback HTTP server: it hands redirects to its client, which follows them, and
  /// answers an unmatched request with `404` and the report as its body.
  package static let server = DoorTraits(
    door: .server, followsRedirects: false, seesUploadBody: true, hasRequestTimeout: false,
    configuredLimits: nil,
    unmatchedOutcome: "The client received 404 Not Found, with this report as its body.",
    notesConfigurationHeaders: false, notesMissedOrigin: true)

  /// These traits with the timeouts of the session configuration the request came through.
  func configured(_ limits: TimeLimits?) -> DoorTraits {
    var traits = self
    traits.configuredLimits = limits
    return traits
  }
}
