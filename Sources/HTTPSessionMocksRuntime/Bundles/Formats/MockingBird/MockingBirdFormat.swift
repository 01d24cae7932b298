import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A request as a MockingBird bundle entry describes it, matched by MockingBird's own rules
/// (anfema/Mockingbird `src/mockingbird.swift`, whose code differs from its README in places):
///
/// - the method compares exactly with the request's (no change of case; `GET` when the entry
///   names none);
/// - `url` is `://host[:port]/path`, compared as a string with `"://" + host + (":" + port) +
///   path` of the request's URL: any scheme, the host as written, the path percent-decoded and
///   exact (case and a trailing slash count);
/// - the query runs one way: every item of the request's query must be named in `parameters`
///   with an equal value, or with `null` (any value); parameters the request lacks are not
///   required; a request with no query at all matches only entries without parameters.
struct MockingBirdRequest: RequestCondition, Equatable {
  var method: String
  var url: String
  /// The entry's `parameters`, sorted by name; empty when it has none.
  var parameters: [Parameter]

  struct Parameter: Sendable, Equatable {
    var name: String
    /// `nil` for JSON `null`: any value.
    var value: String?
  }

  /// `GET ://httpbin.org/ip`, as reports name the entry.
  var description: String { "\(method) \(url)" }

  /// The request's URL in the entry's form: `://host[:port]/path`, path percent-decoded.
  static func key(of url: URL) -> (key: String, query: [URLQueryItem]?)? {
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
      let host = components.host
    else { return nil }
    let port = components.port.map { ":\($0)" } ?? ""
    return ("://\(host)\(port)\(components.path)", components.queryItems)
  }

  func compare(_ facts: RequestFacts, into result: inout RequestMatcher.Evaluation) {
    let method = facts.request.httpMethod ?? "GET"
    if method != self.method {
      result.miss("method: expected \(self.method) (exactly), got \(method)")
    }
    guard let url = facts.url, let (key, query) = Self.key(of: url) else {
      result.miss("URL: expected \(self.url), got a URL with no host", weight: 2)
      return
    }
    if key != self.url { result.miss("URL: expected \(self.url), got \(key)", weight: 2) }
    guard let query else {
      if !parameters.isEmpty {
        let names = parameters.map(\.name).joined(separator: ", ")
        result.miss(
          "query: the request has none, and this MockingBird entry names parameters (\(names)); "
            + "it matches only requests with a query")
      }
      return
    }
    for item in query {
      let allowed = parameters.contains {
        $0.name == item.name && ($0.value == nil || $0.value == item.value)
      }
      guard !allowed else { continue }
      let given = item.value.map { "\(item.name)=\($0)" } ?? item.name
      if let expected = parameters.first(where: { $0.name == item.name })?.value {
        result.miss("query \(item.name): expected \(item.name)=\(expected), got \(given)")
      } else {
        result.miss(
          "query: \(given) is not among this MockingBird entry's parameters (each query item "
            + "of the request must be named there)")
      }
    }
  }
}

/// Reads MockingBird's Mock-Bundle format: a `bundle.json` array of
/// `{ "request": { "method"?, "url", "parameters"? }, "response": { "code", "headers"?, "file"?,
/// "mime_type"? } }`, with `file` relative to the bundle folder.
///
/// Stricter than MockingBird where MockingBird would silently ignore a value of the wrong type
/// (a number as a parameter value, a header that is not a string, a missing file): those are
/// errors here, with the entry and the member that is wrong.
enum MockingBirdFormat {
  /// The members MockingBird's entries define.
  static let requestMembers: Set = ["method", "url", "parameters"]
  static let responseMembers: Set = ["code", "headers", "file", "mime_type"]

  static func read(_ data: Data, folder: URL?, source: String, name: String) throws(MockBundleError)
    -> MockBundle
  {
    let root = try JSONCursor.parse(data, source: source, duplicates: .lastWins)
    var entries: [MockBundle.Entry] = []
    let files = BundleFiles(folder: folder, source: source)
    for (index, element) in try root.elements().enumerated() {
      entries.append(try entry(element, number: index + 1, files: files, name: name))
    }
    return MockBundle(entries: entries, firstMatchWins: true)
  }

  private static func entry(
    _ cursor: JSONCursor, number: Int, files: BundleFiles, name: String
  ) throws(MockBundleError) -> MockBundle.Entry {
    try cursor.rejectMisspellings(of: ["request", "response"], known: ["request", "response"])
    let request = try cursor.required("request", "an object with \"url\"")
    let response = try cursor.required("response", "an object with \"code\"")
    _ = try request.members()
    _ = try response.members()
    try request.rejectMisspellings(of: ["method", "url", "parameters"], known: requestMembers)
    try response.rejectMisspellings(
      of: ["code", "headers", "file", "mime_type"], known: responseMembers)
    let urlCursor = try request.required("url", "://host[:port]/path")
    let url = try urlCursor.string()
    guard url.hasPrefix("://") else {
      throw urlCursor.fail(
        "expected a URL of the form ://host[:port]/path (MockingBird's form, any scheme), got "
          + urlCursor.found)
    }
    let method = try request.optional("method")?.string() ?? "GET"
    var parameters: [MockingBirdRequest.Parameter] = []
    if let given = try request.optional("parameters") {
      for member in try given.members().sorted(by: { $0.key < $1.key }) {
        let value = try given.member(member.key, member.value).stringOrNull()
        parameters.append(.init(name: member.key, value: value))
      }
    }
    let codeCursor = try response.required("code", "the HTTP status")
    let code = try codeCursor.integer()
    guard (100...999).contains(code) else {
      throw codeCursor.expected("an HTTP status code from 100 to 999")
    }
    var headers: [String: String] = [:]
    if let given = try response.optional("headers") {
      for member in try given.members() {
        let value = given.member(member.key, member.value)
        // The loopback server sends these: a field that would split the response is refused,
        // as in our format and WireMock's.
        if let problem = HeaderFieldText.nameProblem(member.key) { throw value.fail(problem) }
        headers[member.key] = try HeadCoding.headerValue(value, name: member.key)
      }
    }
    // MockingBird sets Content-Type from mime_type, and so removes one the headers give when
    // the entry has no mime_type.
    if let mimeType = try response.optional("mime_type") {
      headers["Content-Type"] = try HeadCoding.headerValue(mimeType, name: "Content-Type")
    } else {
      headers["Content-Type"] = nil
    }
    let body: StubResponse.Body
    if let file = try response.optional("file") {
      let path = try file.string()
      body = .stored(path: path, data: try files.read(path, at: file))
    } else {
      body = .empty
    }
    let matcher = MockingBirdRequest(method: method, url: url, parameters: parameters)
    return MockBundle.Entry(
      matcher: RequestMatcher(.condition(matcher), description: matcher.description),
      responses: [StubResponse(.http(body, status: code, headers: headers))],
      origin: "\(name) entry \(number)")
  }
}
