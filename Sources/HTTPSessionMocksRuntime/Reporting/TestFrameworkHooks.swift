/// What a double needs of the test frameworks, supplied at run time by the `HTTPSessionMocks`
/// module of a test that links it.
///
/// `HTTPSessionMocksRuntime` links neither XCTest nor Swift Testing, so that an app, a SwiftUI
/// preview or `stub-server` can link the mock and still launch (an iOS app that links XCTest
/// stops at launch: `dyld: Library not loaded: @rpath/XCTest.framework`). A test imports
/// `HTTPSessionMocks` instead, which links both frameworks and declares the one type that
/// adopts this protocol. The runtime finds that type through the Swift runtime's type lookup
/// (``TestFrameworkLink``), which sees every image the process has loaded, a test bundle among
/// them; where it is absent, reports go to standard error.
package protocol TestFrameworkHooks: Sendable {
  /// Whether the current Swift task runs a Swift Testing test (`Test.current != nil`).
  static var isRunningSwiftTestingTest: Bool { get }

  /// Records `message` as a Swift Testing issue of `severity` at `site`; returns whether it
  /// did (a toolchain without warning issues records no warning).
  static func recordIssue(_ message: String, severity: CapturedReport.Severity, at site: CallSite)
    -> Bool

  /// Records `message` as an XCTest failure at `site`; returns whether it did (no XCTest on the
  /// platform).
  static func recordXCTestFailure(_ message: String, at site: CallSite) -> Bool
}

/// How the runtime reaches the ``TestFrameworkHooks`` of `HTTPSessionMocks`, when the process
/// links it.
enum TestFrameworkLink {
  /// The mangled name of `HTTPSessionMocks.TestFrameworkGlue`. A test in `HTTPSessionMocksTests`
  /// checks it against `_mangledTypeName(TestFrameworkGlue.self)`, so a rename cannot break the
  /// link silently.
  static let glueTypeName = "16HTTPSessionMocks17TestFrameworkGlueO"

  /// The test frameworks' side, looked up once: `nil` in a process that does not link
  /// `HTTPSessionMocks` (an app, a preview, `stub-server`).
  static let hooks: (any TestFrameworkHooks.Type)? =
    _typeByName(glueTypeName) as? any TestFrameworkHooks.Type
}
