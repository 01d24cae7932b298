import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One whole URL that a request must have exactly: the matcher of a replayed HAR entry.
///
/// Scheme and host compare case-insensitively, the port with its scheme's default filled in,
/// the path percent-decoded and exactly (as path patterns compare), and the query as a whole:
/// the same items with the same values, in any order, nothing more and nothing less. Unlike a
/// pattern, nothing in it is a parameter: `{`, `//` and every other character mean themselves.
///
/// A class: routing reads it out of its matcher for every candidate, and copying a struct of
/// eight fields cost a retain and a release for each.
final class ExactURL: Sendable {
  /// The URL as given, for descriptions and for writing it back out.
  let url: URL
  /// Its absolute string, which a request sent again usually has exactly.
  let text: String
  let scheme: String
  let host: String
  let port: Int?
  /// The decoded path, the way ``RequestFacts`` compares it.
  let path: String
  /// The path key of the exact-path index, or `nil` when the decoded path holds an encoded `/`.
  let indexPath: String?
  /// The query items, decoded and sorted, each `name` or `name=value`.
  let query: [String]

  /// The URL's parts, or `nil` when it has no scheme or no host.
  init?(_ url: URL) {
    let facts = RequestFacts(URLRequest(url: url))
    guard let scheme = facts.scheme, let host = facts.host, !host.isEmpty else { return nil }
    self.url = url
    self.text = url.absoluteString
    self.scheme = scheme
    self.host = host
    self.port = facts.port ?? PatternComparison.defaultPort(scheme)
    self.path = facts.literalKey ?? facts.rawPath
    self.indexPath = facts.literalKey
    self.query = Self.query(of: facts)
  }

  private static func query(of facts: RequestFacts) -> [String] {
    facts.queryItems.map { item in item.value.map { "\(item.name)=\($0)" } ?? item.name }.sorted()
  }

  /// Adds to `result` what differs between this URL and the request's.
  func compare(_ facts: RequestFacts, into result: inout RequestMatcher.Evaluation) {
    // A client sends the URL it sent when it was recorded, as the same text: one comparison.
    if let sent = facts.url, sent.absoluteString == text { return }
    if scheme != facts.scheme {
      result.miss("scheme: expected \(scheme), got \(facts.scheme ?? "none")")
    }
    if host != facts.host {
      result.miss("host: expected \(host), got \(facts.host ?? "none")", weight: 2)
    }
    let actualPort = facts.port ?? PatternComparison.defaultPort(facts.scheme)
    if port != actualPort {
      result.miss(
        "port: expected \(port.map(String.init) ?? "none"), "
          + "got \(actualPort.map(String.init) ?? "none")")
    }
    let actualPath = facts.literalKey ?? facts.rawPath
    if path != actualPath {
      result.miss("path: expected \(path), got \(actualPath)")
    }
    let actualQuery = Self.query(of: facts)
    if query != actualQuery {
      let expected = query.isEmpty ? "no query" : query.joined(separator: "&")
      let actual = actualQuery.isEmpty ? "no query" : actualQuery.joined(separator: "&")
      result.miss("query: expected \(expected), got \(actual)")
    }
  }
}

extension RequestMatcher {
  /// Requests with the HTTP method `method` to exactly `url` (see ``ExactURL``), and with
  /// `body` when it is given (see ``recordedBody(_:mimeType:)``): what a replayed HAR entry
  /// matches.
  static func exact(_ method: String, _ url: URL, body: Data? = nil, mimeType: String? = nil)
    -> RequestMatcher?
  {
    ExactURL(url).map { exact(method, $0, body: body, mimeType: mimeType) }
  }

  /// The exact matcher for a URL already taken apart.
  static func exact(
    _ method: String, _ exact: ExactURL, body: Data? = nil, mimeType: String? = nil
  ) -> RequestMatcher {
    let url = exact.url
    let name = RequestFacts.normalizedMethod(method)
    var nodes: [Node] = [.method(name), .exactURL(exact)]
    var description = "\(name) \(url.absoluteString)"
    if let body {
      let node = recordedBody(body, mimeType: mimeType)
      nodes.append(node)
      if case .jsonBody(let value) = node {
        description += " JSON body \(value.shortDescription)"
      } else {
        description += " body \(BodyText(body))"
      }
    }
    return RequestMatcher(.all(nodes), description: description)
  }

  /// How a recorded body is matched: as a JSON value (numbers by value, object keys in any
  /// order, arrays in order, as ``jsonBody(_:)-107rh`` does) when it parses as JSON
  /// and either `mimeType` names JSON (`application/json`, `text/json`, `…+json`) or the body
  /// is an object or an array; byte for byte otherwise. A client that encodes the same value
  /// again need not write its keys in the same order (`JSONEncoder` on Linux does not).
  static func recordedBody(_ data: Data, mimeType: String?) -> Node {
    JSONValue(recordedBody: data, mimeType: mimeType).map { .jsonBody($0) } ?? .body(data)
  }

  /// The exact-path index key of a matcher that names one exact path: an exact URL, or a file
  /// format's condition that requires one path (a WireMock mapping's `url` or `urlPath`), so
  /// that such stubs are found by their path instead of being tried one by one.
  var exactURLIndexPath: String? {
    switch node {
    case .condition(let condition): return condition.indexPath
    case .all(let nodes):
      var found: String?
      for inner in nodes {
        let path: String?
        switch inner {
        case .exactURL(let exact): path = exact.indexPath
        case .condition(let condition): path = condition.indexPath
        default: continue
        }
        guard let path else { continue }
        guard found == nil else { return nil }
        found = path
      }
      return found
    default: return nil
    }
  }

  /// The method, URL and body of a matcher made by ``exact(_:_:body:mimeType:)``, or `nil` for
  /// any other matcher; a JSON body comes back as compact JSON, with `application/json` as its
  /// MIME type.
  var exactParts: (method: String, url: URL, body: Data?, mimeType: String?)? {
    guard case .all(let nodes) = node else { return nil }
    var method: String?
    var url: URL?
    var body: Data?
    var mimeType: String?
    for inner in nodes {
      switch inner {
      case .method(let name) where method == nil: method = name
      case .exactURL(let exact) where url == nil: url = exact.url
      case .body(let data) where body == nil: body = data
      case .jsonBody(let value) where body == nil:
        body = JSONWriter.compact(value)
        mimeType = "application/json"
      default: return nil
      }
    }
    guard let method, let url else { return nil }
    return (method, url, body, mimeType)
  }
}
