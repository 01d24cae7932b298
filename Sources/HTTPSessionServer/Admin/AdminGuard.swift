import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Who may use the admin API: the developer's own tools, not web pages.
///
/// A page from another site can make a browser send requests to a loopback server: a `POST`
/// with a `text/plain` body needs no preflight, and a DNS-rebinding name (`evil.example`
/// resolving to `127.0.0.1`) makes even reads same-origin to the browser. So an admin request
/// is refused when:
///
/// - its `Host` is not one of the server's own names with its port: `127.0.0.1`, `localhost`,
///   `[::1]`, or the host of the server's base URL (a rebinding name never is), or it has none;
/// - it changes something (any method but `GET`, `HEAD` and `OPTIONS`) and a browser marks it
///   as sent by another site: an `Origin` that is not the server's own (`http://` and one of the
///   names above with the port; `null` never is), or `Sec-Fetch-Site: cross-site` or
///   `same-site`.
///
/// curl, scripts and WireMock's admin clients send no `Origin`, and a page the server serves
/// itself sends its own, so they pass.
struct AdminGuard {
  /// The names the server answers to, lowercased: `127.0.0.1`, `localhost`, `[::1]` and its
  /// base URL's host.
  let hosts: Set<String>
  /// The server's port.
  let port: Int

  /// The guard of the server whose base URL is `url`'s scheme, host and port (the URL of a
  /// request the server received); `nil` when it has none.
  init?(serverURL url: URL) {
    guard let host = url.host?.lowercased(), let port = url.port else { return nil }
    // `URL.host` drops the brackets of an IPv6 address on some platforms.
    let named = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    hosts = ["127.0.0.1", "localhost", "[::1]", named]
    self.port = port
  }

  /// Why `request` is refused, or `nil` when it may go on.
  func refusal(of request: URLRequest) -> String? {
    guard let host = request.value(forHTTPHeaderField: "Host") else {
      return "The admin API answers only requests that name this server in their Host header, "
        + "and this request has none."
    }
    guard isOwn(authority: host) else {
      return "The admin API answers only requests addressed to this server by a loopback name "
        + "(Host: 127.0.0.1:\(port), localhost:\(port) or [::1]:\(port)), and this one was "
        + "addressed to \(Self.quoted(host)): a page that renamed this server (DNS rebinding) "
        + "must not read or change it."
    }
    let method = (request.httpMethod ?? "GET").uppercased()
    guard !["GET", "HEAD", "OPTIONS"].contains(method) else { return nil }
    if let origin = request.value(forHTTPHeaderField: "Origin"), !isOwn(origin: origin) {
      return "The admin API refuses \(method) requests that a browser sent for another site "
        + "(Origin: \(Self.quoted(origin))): only curl, scripts, admin clients and pages this "
        + "server serves itself may change it."
    }
    if let site = request.value(forHTTPHeaderField: "Sec-Fetch-Site")?.lowercased(),
      site == "cross-site" || site == "same-site"
    {
      return "The admin API refuses \(method) requests that a browser sent for another site "
        + "(Sec-Fetch-Site: \(site)): only curl, scripts, admin clients and pages this server "
        + "serves itself may change it."
    }
    return nil
  }

  /// Whether `authority` (a `Host` value, `host[:port]`) is one of the server's names with its
  /// port; without a port, only when the port is 80.
  func isOwn(authority: String) -> Bool {
    let text = authority.lowercased()
    var host = Substring(text)
    var port: Substring?
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]") else { return false }
      host = text[...close]
      let rest = text[text.index(after: close)...]
      if !rest.isEmpty {
        guard rest.hasPrefix(":") else { return false }
        port = rest.dropFirst()
      }
    } else if let colon = text.lastIndex(of: ":") {
      host = text[..<colon]
      port = text[text.index(after: colon)...]
    }
    guard hosts.contains(String(host)) else { return false }
    guard let port else { return self.port == 80 }
    return port == String(self.port)
  }

  /// Whether `origin` (an `Origin` value) is `http://` and one of the server's names with its
  /// port.
  func isOwn(origin: String) -> Bool {
    let prefix = "http://"
    guard origin.lowercased().hasPrefix(prefix) else { return false }
    return isOwn(authority: String(origin.dropFirst(prefix.count)))
  }

  /// `text` quoted for a message, cut at 100 characters (a header may be long).
  private static func quoted(_ text: String) -> String {
    (text.count > 100 ? String(text.prefix(100)) + "…" : text).debugDescription
  }
}
