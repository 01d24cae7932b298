import Foundation
import HTTPSessionKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension StubResponse {
  /// An answer fetched from another server, as WireMock's `proxyBaseUrl` fetches it: the
  /// matched request goes to `baseURL` plus the request's path and query, with its method, its
  /// headers and its body, and whatever that server answers (status, headers, body, or a
  /// transport error) is the answer, as it is.
  ///
  /// ```swift
  /// // GET /feed comes from the staging server, whatever it answers today.
  /// mock.stub(.get("/feed"), with: .proxy(to: URL(string: "https://staging.example.com")!))
  /// ```
  ///
  /// The request is sent through `session`: in a test, usually another double, so that no
  /// request leaves the machine.
  ///
  /// ```swift
  /// let upstream = URLSessionMock()
  /// upstream.stub(.get("/users/1"), with: .json(["id": 1]))
  /// mock.stub(
  ///   .get("/users/1"),
  ///   with: .proxy(to: URL(string: "https://users.internal")!, through: upstream))
  /// // GET https://api.example.com/users/1 is sent as GET https://users.internal/users/1.
  /// ```
  ///
  /// Without a session, the response makes an ephemeral `URLSession` of its own when it is
  /// first used, one that follows no redirect (a `3xx` is answered as it is, as WireMock
  /// answers it) and keeps no cookies.
  ///
  /// The forwarded request loses the fields that belong to one connection (`Host`,
  /// `Content-Length`, `Connection`, `Keep-Alive`, `Transfer-Encoding`, `TE`, `Upgrade`,
  /// `Proxy-Connection`): the upstream session sets its own. Then the fields of
  /// `removingHeaders` are taken out (WireMock's `removeProxyRequestHeaders`) and those of
  /// `addingHeaders` are set, replacing any value of the same name
  /// (`additionalProxyRequestHeaders`). A field of `addingHeaders` whose name is not a token or
  /// whose value holds CR, LF or NUL would end its line and start another header or request
  /// upstream, so the stub is invalid instead: the test that uses it fails, naming the field.
  ///
  /// The exchange is recorded as the stub's, with the request the mock received and the
  /// answer the upstream gave.
  ///
  /// > Important: A proxied answer comes when the upstream answers: it cannot be delayed or
  /// > dribbled. A stub that combines `.proxy` with ``delayed(by:)-(Duration)``,
  /// > ``delayed(by:)-(DelayDistribution)`` or ``dribbled(inChunks:over:)`` fails the request
  /// > with a report, and a WireMock mapping that combines `proxyBaseUrl` with a delay is
  /// > refused.
  ///
  /// - Parameters:
  ///   - baseURL: The server to ask; its path, if it has one, comes before the request's path
  ///     (`https://host/v2` and `/users` give `https://host/v2/users`).
  ///   - session: Where the request is sent; `nil` for a `URLSession` of the response's own.
  ///   - addingHeaders: Fields set on the forwarded request.
  ///   - removingHeaders: Names of fields taken out of the forwarded request, in any case.
  public static func proxy(
    to baseURL: URL, through session: (any HTTPSession)? = nil,
    addingHeaders: [String: String] = [:], removingHeaders: [String] = []
  ) -> StubResponse {
    // Sent upstream as given: a line break in a field would be a header or request of its own.
    for (name, value) in addingHeaders.sorted(by: { $0.key < $1.key }) {
      if let problem =
        HeaderFieldText.nameProblem(name) ?? HeaderFieldText.valueProblem(value, name: name)
      {
        return StubResponse(.invalid("The proxy cannot add this header: \(problem)."))
      }
    }
    return StubResponse(
      .proxy(
        Proxy(
          baseText: baseURL.absoluteString,
          upstream: session.map(Proxy.Upstream.session) ?? .own(OwnSession()),
          addedHeaders: addingHeaders, removedHeaders: removingHeaders)))
  }

  /// Where a proxied stub sends the requests it matches, and how it changes them.
  struct Proxy: Sendable {
    enum Upstream: Sendable {
      /// A session the test gave.
      case session(any HTTPSession)
      /// A `URLSession` the response makes when first used.
      case own(OwnSession)
    }

    /// Fields of one connection, which the upstream session sets for its own.
    static let connectionFields: Set<String> = [
      "host", "content-length", "connection", "keep-alive", "transfer-encoding", "te",
      "upgrade", "proxy-connection",
    ]

    /// The base URL as written; a template (WireMock's `proxyBaseUrl` holding `{{`) when
    /// ``baseTemplate`` is set.
    let baseText: String
    /// The base URL's template, rendered for each request (a templated mapping's
    /// `proxyBaseUrl`); `nil`: ``baseText`` is the URL.
    var baseTemplate: ResponseTemplate? = nil
    let upstream: Upstream
    let addedHeaders: [String: String]
    let removedHeaders: [String]

    /// The session the request goes to.
    var session: any HTTPSession {
      switch upstream {
      case .session(let session): return session
      case .own(let own): return own.session
      }
    }

    /// Whether the response was given a session (WireMock's mappings never are).
    var hasSession: Bool {
      if case .session = upstream { return true }
      return false
    }

    /// This proxy with its base URL read as a template when it holds `{{` (WireMock's
    /// `response-template` on a `proxyBaseUrl`).
    func templated(seed: UInt64 = 0) -> Proxy {
      guard baseTemplate == nil, baseText.contains("{{") else { return self }
      var copy = self
      copy.baseTemplate = ResponseTemplate(
        body: baseText, headers: [:], fileName: nil, source: .folder(nil), seed: seed)
      return copy
    }

    /// Whether `text` is a base URL a proxy can send to: http or https, with a host and no
    /// query.
    static func isBaseURL(_ text: String) -> Bool {
      guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
        scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty,
        url.query == nil
      else { return false }
      return true
    }

    /// `request` as it is sent upstream: to `base` (``baseText`` unless given, the rendered
    /// template) plus its path and query, without the connection's fields, the removed ones,
    /// and with the added ones; `nil` when its URL has no path to append.
    func upstreamRequest(for request: URLRequest, base given: String? = nil) -> URLRequest? {
      guard let url = request.url,
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
      else { return nil }
      var base = given ?? baseText
      while base.hasSuffix("/") { base.removeLast() }
      var pathAndQuery = components.percentEncodedPath
      if pathAndQuery.isEmpty { pathAndQuery = "/" }
      if let query = components.percentEncodedQuery { pathAndQuery += "?" + query }
      guard let target = URL(string: base + pathAndQuery) else { return nil }
      var forwarded = URLRequest(url: target)
      forwarded.httpMethod = request.httpMethod ?? "GET"
      forwarded.httpBody = request.httpBody
      forwarded.timeoutInterval = request.timeoutInterval
      let removed = Set(removedHeaders.map { $0.lowercased() }).union(Self.connectionFields)
      var fields: [String: String] = [:]
      for (name, value) in request.allHTTPHeaderFields ?? [:]
      where !removed.contains(name.lowercased()) {
        fields[name] = value
      }
      for (name, value) in addedHeaders {
        for existing in fields.keys where existing.lowercased() == name.lowercased() {
          fields[existing] = nil
        }
        fields[name] = value
      }
      forwarded.allHTTPHeaderFields = fields
      return forwarded
    }
  }

  /// The `URLSession` of a proxied response given no session: made when first used, it
  /// follows no redirect and keeps no cookies or cache, and is invalidated when the response
  /// goes.
  final class OwnSession: Sendable {
    private let made = Locked<URLSession?>(nil)

    init() {}

    var session: URLSession {
      made.withLock { made in
        if let made { return made }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(
          configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
        made = session
        return session
      }
    }

    deinit {
      made.withLock { $0 }?.finishTasksAndInvalidate()
    }
  }

  /// Answers a redirect as it is instead of following it.
  private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
      _ session: URLSession, task: URLSessionTask,
      willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
      completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
      completionHandler(nil)
    }
  }
}
