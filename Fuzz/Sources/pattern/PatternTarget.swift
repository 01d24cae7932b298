import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The request-pattern parser and matcher, from the pattern text to routing through a mock.
//
// Input, as text lines (see Fuzz/corpus/pattern for examples):
//
//   line 1   the pattern, given to .url, .method, .get and .regex
//   line 2   the request's URL; empty: the pattern with each {name} filled in
//   line 3   the request's method; empty: GET
//   then     "Name: value" header lines, up to an empty line
//   rest     the request's body

/// One input for libFuzzer: a pattern and a request, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let input = PatternInput(Data(bytes: start, count: count))
  let request = input.request()
  let facts = RequestFacts(request)
  checkParser(input.pattern)
  checkMatchers(input, request, facts)
  checkIndex(input.pattern, facts)
  checkOwnURL(facts)
  checkRouting(input, request)
  return 0
}

struct PatternInput {
  var pattern = ""
  var url = ""
  var method = ""
  var headers: [(name: String, value: String)] = []
  var body = Data()

  init(_ data: Data) {
    var rest = data[...]
    func nextLine() -> String? {
      guard !rest.isEmpty else { return nil }
      let end = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
      let line = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
      rest = end < rest.endIndex ? rest[(end + 1)...] : rest[rest.endIndex...]
      return line
    }
    pattern = nextLine() ?? ""
    url = nextLine() ?? ""
    method = nextLine() ?? ""
    while let line = nextLine(), !line.isEmpty {
      let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
      let value = parts.count > 1 ? parts[1].drop(while: { $0 == " " }) : ""
      headers.append((String(parts[0]), String(value)))
    }
    body = Data(rest)
  }

  /// The request line 2 describes, or one made from the pattern so that it often matches.
  func request() -> URLRequest {
    var request = makeRequest(url.isEmpty ? Self.filledIn(pattern) : url)
    if !method.isEmpty { request.httpMethod = method }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if !body.isEmpty { request.httpBody = body }
    return request
  }

  /// `pattern` with each `{name}` replaced by `v`, on a host when it is a path.
  static func filledIn(_ pattern: String) -> String {
    var text = ""
    var inParameter = false
    for character in pattern {
      switch character {
      case "{":
        inParameter = true
        text += "v"
      case "}": inParameter = false
      default: if !inParameter { text.append(character) }
      }
    }
    return text.hasPrefix("/") ? "https://example.com" + text : text
  }
}

/// The parser either accepts a pattern or says why not, and the matcher agrees.
func checkParser(_ source: String) {
  let parsed: URLPattern?
  do {
    parsed = try URLPattern(parsing: source)
  } catch {
    check(!error.reason.isEmpty, "a parse error with no reason for \(source.debugDescription)")
    parsed = nil
  }
  let matcher = RequestMatcher.url(source)
  check(matcher.description == source, "description \(matcher.description) for \(source)")
  check(
    matcher.problems.isEmpty == (parsed != nil),
    "problems \(matcher.problems) for \(source.debugDescription)")
  let method = RequestMatcher.method("get", source)
  check(method.description == "GET \(source)", "description \(method.description)")
  check((method.indexKey != nil) == (parsed != nil), "index key for \(source.debugDescription)")
  if let parsed {
    _ = parsed.pathDescription
    _ = parsed.literalPath
    check(!parsed.segments.isEmpty, "no segments for \(source.debugDescription)")
  }
}

/// Every matcher built from the input evaluates the request without trapping, and its
/// evaluation, `matches` and the near-miss report agree.
func checkMatchers(_ input: PatternInput, _ request: URLRequest, _ facts: RequestFacts) {
  let pattern = input.pattern
  var matchers: [RequestMatcher] = [
    .url(pattern), .get(pattern), .post(pattern),
    .method(input.method.isEmpty ? "GET" : input.method, pattern), .regex(pattern),
    .url(pattern) || .regex(pattern), !.url(pattern), .body(input.body),
  ]
  matchers.append(matchers[0] && matchers[4] && .body(input.body))
  for (name, value) in input.headers {
    matchers.append(.header(name))
    matchers.append(.get(pattern).header(name, value))
    // Header names compare in any case.
    if request.value(forHTTPHeaderField: name) != nil, name.allSatisfy(\.isASCII) {
      for spelling in [name.lowercased(), name.uppercased()] {
        check(
          RequestMatcher.header(spelling).matches(request),
          "header \(spelling.debugDescription) not found in \(request.allHTTPHeaderFields ?? [:])")
      }
    }
  }
  // The query items the library reads from the request are, as a matcher, in the request.
  let items = Dictionary(facts.queryItems.map { ($0.name, $0.value) }) { first, _ in first }
  let query = RequestMatcher.query(items)
  check(query.matches(request), "\(query) does not match \(request.url?.absoluteString ?? "-")")
  matchers.append(query)

  for matcher in matchers {
    let evaluation = matcher.evaluate(facts)
    check(evaluation.matched == matcher.matches(request), "matches() disagrees for \(matcher)")
    check(
      evaluation.distance >= 0 && evaluation.distance.isFinite,
      "distance \(evaluation.distance) for \(matcher)")
    check(
      evaluation.matched == (evaluation.distance == 0),
      "matched \(evaluation.matched) with distance \(evaluation.distance) for \(matcher)")
    if !matcher.problems.isEmpty {
      check(!evaluation.matched, "\(matcher) has problems \(matcher.problems) but matched")
    }
    let report = NearMiss.requestReport([request], against: matcher, .default)
    check(!report.isEmpty, "an empty report")
  }
}

/// The trie finds a pattern exactly when the pattern's segments fit the request's.
func checkIndex(_ source: String, _ facts: RequestFacts) {
  var index = PathIndex()
  let fixed = ["/users/{login}", "/users/octocat", "/", "/files/{name}.json", "/a/b/c/"]
  for (offset, text) in fixed.enumerated() {
    if let pattern = try? URLPattern(parsing: text) {
      index.insert(pattern.segments, id: 10 + offset)
    }
  }
  index.insert(facts.segments.map { .literal($0) }, id: 2)
  let pattern = try? URLPattern(parsing: source)
  if let pattern { index.insert(pattern.segments, id: 1) }
  let candidates = index.candidates(for: facts.segments)
  check(candidates.contains(2), "the request's own path is not a candidate: \(facts.segments)")
  if let pattern {
    let fits = PatternComparison.matchSegments(pattern.segments, facts.segments) != nil
    check(
      candidates.contains(1) == fits,
      "index and matcher disagree on \(source.debugDescription) for \(facts.segments)")
  }
}

/// A request's own URL, written as a pattern, matches the request: its path and query, and
/// its absolute URL.
func checkOwnURL(_ facts: RequestFacts) {
  guard let url = facts.url else { return }
  let path = url.path(percentEncoded: true)
  let query = url.query(percentEncoded: true)
  let pathSource = "/" + (path.hasPrefix("/") ? path.dropFirst() : path[...])
  let source = pathSource + (query.map { "?" + $0 } ?? "")
  // What the parser rightly refuses: braces, a fragment, an empty segment, an unnamed item.
  let refusable =
    source.contains { "{}#".contains($0) } || pathSource.contains("//")
    || (query ?? "").split(separator: "&").contains { $0.hasPrefix("=") }
  do {
    let own = try URLPattern(parsing: source)
    var evaluation = RequestMatcher.Evaluation()
    PatternComparison.compare(own, facts, into: &evaluation)
    check(
      evaluation.matched,
      "\(url.absoluteString.debugDescription) does not match its own path and query "
        + "\(source.debugDescription): \(evaluation.mismatches)")
  } catch {
    check(
      refusable,
      "the path and query \(source.debugDescription) of \(url.absoluteString.debugDescription) "
        + "is not a pattern: \(error.reason)")
  }
  let absolute = url.absoluteString
  if url.scheme != nil, url.host != nil, let own = try? URLPattern(parsing: absolute) {
    var evaluation = RequestMatcher.Evaluation()
    PatternComparison.compare(own, facts, into: &evaluation)
    check(
      evaluation.matched,
      "\(absolute.debugDescription) does not match itself as a pattern: \(evaluation.mismatches)"
    )
  }
}

/// Routing through mocks answers with the newest stub whose matcher accepts the request, and
/// a 404 from the unmatched-request policy otherwise.
func checkRouting(_ input: PatternInput, _ request: URLRequest) {
  let pattern = input.pattern
  let mock = URLSessionMock()
  mock.unmatchedRequestPolicy = .respond(with: .status(404))
  let parameterNames = Set(
    ((try? URLPattern(parsing: pattern))?.segments ?? []).compactMap { segment -> String? in
      if case .parameter(let name, _, _) = segment { return name } else { return nil }
    })
  let stubs: [(matcher: RequestMatcher, status: Int)] = [
    (!.url(pattern), 200),
    (.get("/users/{login}"), 201),
    (.url("https://example.com/"), 202),
    (.regex(pattern), 203),
    (.method(input.method.isEmpty ? "GET" : input.method, pattern), 204),
    (.url(pattern).header(input.headers.first?.name ?? "Accept"), 205),
    (.url(pattern), 206),
  ]
  // The input's headers come back as response headers, in any spelling.
  let headers = Dictionary(input.headers.map { ($0.name, $0.value) }) { first, _ in first }
  for (matcher, status) in stubs {
    let stub = mock.stub(matcher) { _, parameters in
      if status == 206 {
        check(
          Set(parameters.keys) == parameterNames,
          "parameters \(parameters) for \(pattern.debugDescription)")
        return .data(input.body, status: status, headers: headers)
      }
      return .status(status)
    }
    _ = stub.description
  }
  let expected = stubs.last { $0.matcher.matches(request) }?.status ?? 404
  let answer = send(request, to: mock)
  if expected == 206 { check(answer.body == input.body, "the body changed") }
  check(
    answer.status == expected,
    "status \(answer.status.map(String.init) ?? "none"), expected \(expected) for "
      + "\(pattern.debugDescription) and \(request.url?.absoluteString ?? "no URL")")
  check(mock.requests.count == 1, "\(mock.requests.count) requests recorded")
  check(
    mock.unmatchedRequests.count == (expected == 404 ? 1 : 0),
    "\(mock.unmatchedRequests.count) unmatched requests")
  // Verification agrees with matching; a malformed matcher always fails it (the report goes to
  // standard error, which Fuzz/run discards).
  for (matcher, _) in stubs {
    let count: CallCount = matcher.matches(request) ? .once : .never
    check(
      mock.verify(matcher, called: count) == matcher.problems.isEmpty,
      "verify(\(matcher), called: \(count)) disagrees with matches()")
  }
  let inOrder = mock.verifyInOrder([.any, .url(pattern)])
  check(!inOrder, "two steps matched one request")
  _ = mock.verifyAllStubsUsed()
  _ = mock.verifyNoUnmatchedRequests()
  let misses = mock.nearMisses(for: request)
  check(misses.count == stubs.count, "\(misses.count) near misses for \(stubs.count) stubs")
  _ = NearMiss.unmatchedReport(request, misses, redaction: .default)
}
