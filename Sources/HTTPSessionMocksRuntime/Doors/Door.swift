/// The way a request came into a double: the door an ``Exchange`` records.
///
/// The injected mock, the URLProtocol bridge and the loopback server are three ways in to the
/// same mock: the same stubs answer, and the journal records each exchange with its door.
///
/// ```swift
/// for exchange in mock.exchanges {
///   switch exchange.door {
///   case .injected: break  // the code under test called the mock itself
///   case .urlProtocol: break  // a URLSession configured with the mock's protocol class
///   case .server: break  // an HTTP client of the mock's loopback server
///   }
/// }
/// ```
///
/// Its description is the door's name: `injected`, `URLProtocol` or `server`.
public enum Door: Sendable, Hashable, CustomStringConvertible {
  /// The double itself, injected as an `HTTPSession`.
  case injected
  /// A real `URLSession` whose protocol class is the mock's URLProtocol bridge.
  case urlProtocol
  /// The loopback HTTP server.
  case server

  /// `injected`, `URLProtocol` or `server`.
  public var description: String {
    switch self {
    case .injected: return "injected"
    case .urlProtocol: return "URLProtocol"
    case .server: return "server"
    }
  }
}
