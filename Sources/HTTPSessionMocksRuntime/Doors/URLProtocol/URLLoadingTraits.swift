import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a platform's URL loading does with a `URLProtocol`'s client calls, where Apple's and
/// swift-corelibs-foundation's differ.
///
/// The URLProtocol bridge decides the client calls it makes from these values, in code that
/// every platform compiles, so that Linux tests both sequences against a client that records
/// them (`ProtocolSinkTests`); only ``current`` depends on the platform.
package struct URLLoadingTraits: Equatable, Sendable {
  /// Whether URL loading follows a redirect that a protocol reports through its client.
  ///
  /// Apple's does: after `urlProtocol(_:wasRedirectedTo:redirectResponse:)` it asks the
  /// session's delegate, and either loads the follow-up request through a new protocol object
  /// or, when the delegate refuses, hands the task the 3xx response that the protocol goes on
  /// to deliver (`didReceive`, `didLoad`, `urlProtocolDidFinishLoading`), as it would a
  /// server's. Corelibs' `wasRedirectedTo` is a `fatalError`, so there the mock follows
  /// redirects itself and the protocol never reports one.
  package var followsRedirectsThroughClient: Bool

  /// Whether URL loading keeps only the last `didLoad` piece of a body for completion-handler
  /// and async tasks (each piece overwrites the one before), so that a body must reach it in
  /// one piece. Corelibs' does; Apple's appends each piece.
  package var keepsOnlyLastPiece: Bool

  /// Apple platforms' URL loading.
  package static let apple = URLLoadingTraits(
    followsRedirectsThroughClient: true, keepsOnlyLastPiece: false)

  /// swift-corelibs-foundation's URL loading (Linux).
  package static let corelibs = URLLoadingTraits(
    followsRedirectsThroughClient: false, keepsOnlyLastPiece: true)

  /// The URL loading of the platform this code runs on.
  package static var current: URLLoadingTraits {
    #if canImport(FoundationNetworking)
      .corelibs
    #else
      .apple
    #endif
  }
}
