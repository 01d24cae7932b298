import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the URLProtocol bridge knows of the sessions routed to a mock that a protocol object
/// cannot see: how URL loading hands the body to the task, the configuration's timeouts and
/// its `httpAdditionalHeaders`.
///
/// A protocol object sees the request and its task, never the session's configuration or its
/// delegate. So ``URLSessionMock/intercept(_:deliveringPiecesAsTheyCome:)`` reads them where
/// it has them, and each distinct profile of a mock gets a protocol class of its own (a slot of
/// ``BridgeTable``): the class a session's configuration names tells the bridge its profile.
/// The default profile (whole bodies where URL loading keeps only the last piece, the mock's own
/// limits) is the mock's first slot, as before any profile existed.
struct BridgeProfile: Hashable, Sendable {
  /// Whether each body piece goes to URL loading as it is released, even where URL loading
  /// keeps only the last piece for completion handlers (Linux): the session has a data delegate,
  /// which gets every piece.
  var deliversPieces = false
  /// The configuration's `timeoutIntervalForRequest`, when it is not URLSession's default.
  var requestTimeout: Duration?
  /// The configuration's `timeoutIntervalForResource`, when it is not URLSession's default.
  var resourceTimeout: Duration?
  /// The configuration's `httpAdditionalHeaders`, as URLSession sends them (names and values
  /// as text), when the configuration set them before it was intercepted.
  var additionalHeaders: [String: String] = [:]

  static let `default` = BridgeProfile()

  /// URLSession's default `timeoutIntervalForResource`: 7 days.
  static let defaultResourceTimeout: TimeInterval = 604_800

  /// The profile of sessions made from `configuration`.
  init(_ configuration: URLSessionConfiguration, deliversPieces: Bool) {
    self.deliversPieces = deliversPieces
    let request = configuration.timeoutIntervalForRequest
    requestTimeout =
      request == TimeLimits.defaultRequestTimeout ? nil : TimeLimits.duration(request)
    let resource = configuration.timeoutIntervalForResource
    resourceTimeout = resource == Self.defaultResourceTimeout ? nil : TimeLimits.duration(resource)
    for (name, value) in configuration.httpAdditionalHeaders ?? [:] {
      // URLSession sends the entries whose name is text, with the value's text.
      guard let name = name.base as? String else { continue }
      additionalHeaders[name] = (value as? String) ?? "\(value)"
    }
  }

  init() {}

  /// `request` as URLSession sends it: with each of the configuration's additional headers
  /// that the request does not set itself (a request's own value wins, as in URLSession).
  func addingAdditionalHeaders(to request: URLRequest) -> URLRequest {
    guard !additionalHeaders.isEmpty else { return request }
    var request = request
    for (name, value) in additionalHeaders.sorted(by: { $0.key < $1.key })
    where request.value(forHTTPHeaderField: name) == nil {
      request.setValue(value, forHTTPHeaderField: name)
    }
    return request
  }

  /// The timeouts the configuration sets, for the mock's task; `nil` when it sets none.
  var configuredLimits: TimeLimits? {
    guard requestTimeout != nil || resourceTimeout != nil else { return nil }
    return TimeLimits(idle: requestTimeout, total: resourceTimeout)
  }

  /// The bridge's traits for a request of these sessions: with the configuration's timeouts.
  var traits: DoorTraits { DoorTraits.urlProtocol.configured(configuredLimits) }
}
