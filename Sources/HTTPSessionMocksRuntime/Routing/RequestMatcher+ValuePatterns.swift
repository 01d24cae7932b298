import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Matchers that test one value of a request with a ``ValuePattern``, as WireMock's mappings
/// do: headers, query parameters, cookies, the body, basic authentication.
extension RequestMatcher {
  /// Requests whose header `name` (any case) matches `pattern`.
  ///
  /// ```swift
  /// mock.stub(.get("/orders").header("Accept", .contains("json")), with: .json(orders))
  /// ```
  public static func header(_ name: String, _ pattern: ValuePattern) -> RequestMatcher {
    value(.header(name), pattern)
  }

  /// Requests with a query parameter `name` (exactly that name, WireMock's rule) whose value
  /// matches `pattern`; with ``ValuePattern/absent``, requests without it.
  public static func queryParameter(_ name: String, _ pattern: ValuePattern) -> RequestMatcher {
    value(.query(name), pattern)
  }

  /// Requests whose `Cookie` header holds a cookie `name` whose value matches `pattern`.
  public static func cookie(_ name: String, _ pattern: ValuePattern) -> RequestMatcher {
    value(.cookie(name), pattern)
  }

  /// Requests whose body, read as UTF-8 text, matches `pattern`.
  ///
  /// ```swift
  /// mock.stub(.post("/pay").body(.matchesJSONPath("$.total", .equalTo("12"))), with: .status(200))
  /// ```
  public static func body(_ pattern: ValuePattern) -> RequestMatcher {
    value(.body, pattern)
  }

  /// Requests with HTTP basic authentication as `username` with `password` (WireMock's
  /// `basicAuthCredentials`: the `Authorization` header, compared in any case).
  public static func basicAuth(username: String, password: String) -> RequestMatcher {
    let token = Data("\(username):\(password)".utf8).base64EncodedString()
    return RequestMatcher(
      .value(.header("Authorization"), .equalTo("Basic \(token)", caseInsensitive: true)),
      text: "basic auth " + .header("Authorization", username))
  }

  /// This matcher, and the header `name` must match `pattern`.
  public func header(_ name: String, _ pattern: ValuePattern) -> RequestMatcher {
    self && .header(name, pattern)
  }

  /// This matcher, and the query parameter `name` must match `pattern`.
  public func queryParameter(_ name: String, _ pattern: ValuePattern) -> RequestMatcher {
    self && .queryParameter(name, pattern)
  }

  /// This matcher, and the cookie `name` must match `pattern`.
  public func cookie(_ name: String, _ pattern: ValuePattern) -> RequestMatcher {
    self && .cookie(name, pattern)
  }

  /// This matcher, and the body must match `pattern`.
  public func body(_ pattern: ValuePattern) -> RequestMatcher {
    self && .body(pattern)
  }

  /// This matcher, and the request must carry basic authentication as `username`.
  public func basicAuth(username: String, password: String) -> RequestMatcher {
    self && .basicAuth(username: username, password: password)
  }

  static func value(_ target: ValueTarget, _ pattern: ValuePattern) -> RequestMatcher {
    RequestMatcher(.value(target, pattern), text: target.text(pattern))
  }
}
