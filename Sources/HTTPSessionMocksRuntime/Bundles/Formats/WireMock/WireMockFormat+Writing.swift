import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension WireMockFormat {
  /// Writes entries as WireMock mappings. A stub WireMock cannot express throws an
  /// `unstorable` ``MockBundleError`` that names it: a closure matcher or response, `||` and
  /// `!`, a URL regex or an absolute URL pattern (WireMock matches paths), an error that is not
  /// one of the faults, `times(n)` or a list of responses on a stub that has scenario states of
  /// its own (a list or a limit becomes a scenario chain, which then has no room).
  struct Writer {
    let intoFolder: Bool
    /// Body files for `__files/`, by path.
    var files: [String: Data] = [:]

    init(intoFolder: Bool) {
      self.intoFolder = intoFolder
    }

    /// The most mappings one entry's chain may become (a list of responses or `times(n)`).
    static let maximumChain = 100

    /// The mappings for `bundle`, each with a file name `NNN-name.json`.
    mutating func mappings(_ bundle: MockBundle) throws(MockBundleError) -> [(
      name: String, json: JSONValue
    )] {
      var result: [(name: String, json: JSONValue)] = []
      // WireMock's rule is the newest first; a first-match bundle is written in reverse, with
      // priorities left as they are.
      let ordered =
        bundle.firstMatchWins
        ? Array(bundle.entries.enumerated().reversed()) : Array(bundle.entries.enumerated())
      for (index, entry) in ordered {
        let slug = Self.slug(entry.matcher)
        for (step, mapping) in try chain(entry, index: index).enumerated() {
          var json = try self.mapping(mapping, index: index)
          if case .object(var members) = json {
            members["name"] = members["name"] ?? .string(slug)
            json = .object(members)
          }
          let number = String(format: "%03d", result.count + 1)
          let suffix = step == 0 ? "" : "-\(step + 1)"
          result.append(("\(number)-\(slug)\(suffix).json", json))
        }
      }
      return result
    }

    /// The entry as one mapping, or a scenario chain of mappings when it has several responses
    /// or a limit.
    private func chain(_ entry: MockBundle.Entry, index: Int) throws(MockBundleError)
      -> [WireMockMapping]
    {
      let single = WireMockMapping(entry: entry)
      guard entry.responses.count > 1 || entry.times != nil else { return [single] }
      if entry.scenario != nil || entry.whenState != nil || entry.willSetState != nil {
        throw Self.unstorable(
          entry, index: index, "responses",
          "it has \(entry.times != nil ? "times(\(entry.times ?? 0))" : "a list of responses") and "
            + "scenario states of its own; WireMock says both with one scenario, which cannot "
            + "hold them together")
      }
      let steps = entry.times ?? entry.responses.count
      guard steps <= Self.maximumChain else {
        throw Self.unstorable(
          entry, index: index, "times",
          "times(\(steps)) would take \(steps) WireMock mappings (at most \(Self.maximumChain))")
      }
      let scenario = "\(entry.origin) #\(index + 1)"
      var mappings: [WireMockMapping] = []
      for step in 0..<steps {
        var copy = entry
        copy.times = nil
        copy.responses =
          entry.responses.isEmpty
          ? [] : [entry.responses[Swift.min(step, entry.responses.count - 1)]]
        copy.scenario = scenario
        copy.whenState = step == 0 ? URLSessionMock.initialNamedScenarioState : "call \(step + 1)"
        let last = step == steps - 1
        copy.willSetState = last ? (entry.times == nil ? nil : "used up") : "call \(step + 2)"
        mappings.append(WireMockMapping(entry: copy))
      }
      return mappings
    }

    private static func unstorable(
      _ entry: MockBundle.Entry, index: Int, _ part: String, _ why: String
    ) -> MockBundleError {
      MockBundleError(
        .unstorable, source: "MockBundle", path: "entries[\(index)].\(part)",
        "the stub \(entry.matcher) (\(entry.origin)) cannot be written as a WireMock mapping: \(why)"
      )
    }

    /// One mapping as WireMock's JSON.
    mutating func mapping(_ mapping: WireMockMapping, index: Int) throws(MockBundleError)
      -> JSONValue
    {
      let entry = mapping.entry
      func fail(_ part: String, _ why: String) -> MockBundleError {
        Self.unstorable(entry, index: index, part, why)
      }
      if entry.dynamic != nil {
        throw fail("responses", "its response is built by a closure")
      }
      if entry.times != nil || entry.responses.count != 1 {
        guard entry.responses.count == 1 else {
          throw fail(
            "responses", "a mapping has exactly one response; write the bundle to write a chain")
        }
        throw fail("times", "a mapping has no limit; write the bundle to write a scenario chain")
      }
      var members: [String: JSONValue] = [
        "id": .string(mapping.id.uuidString.lowercased()),
        "uuid": .string(mapping.id.uuidString.lowercased()),
        "request": try request(entry.matcher.node, fail: { fail("request", $0) }),
        "response": try response(entry.responses[0], index: index, fail: { fail("response", $0) }),
      ]
      if let name = mapping.name { members["name"] = .string(name) }
      if let priority = entry.priority { members["priority"] = .integer(Int64(priority)) }
      if let metadata = mapping.metadata { members["metadata"] = metadata }
      if entry.whenState != nil || entry.willSetState != nil || entry.scenario != nil {
        // The default scenario is written as a named one, "default", whose first state is
        // WireMock's.
        let named = entry.scenario != nil
        func state(_ text: String) -> String {
          !named && text == URLSessionMock.initialScenarioState
            ? URLSessionMock.initialNamedScenarioState : text
        }
        members["scenarioName"] = .string(entry.scenario ?? "default")
        if let required = entry.whenState {
          members["requiredScenarioState"] = .string(state(required))
        }
        if let next = entry.willSetState { members["newScenarioState"] = .string(state(next)) }
      }
      return .object(members)
    }

    // MARK: - Requests

    /// A matcher as a mapping's `request`.
    func request(_ node: RequestMatcher.Node, fail: (String) -> MockBundleError)
      throws(MockBundleError) -> JSONValue
    {
      let normalized = node.normalized
      let nodes: [RequestMatcher.Node]
      if case .all(let list) = normalized { nodes = list } else { nodes = [normalized] }
      var members: [String: JSONValue] = [:]
      var groups: [String: [String: [JSONValue]]] = [:]
      var bodies: [JSONValue] = []
      func setURL(_ key: String, _ value: String) throws(MockBundleError) {
        if let existing = ["url", "urlPath", "urlPathPattern", "urlPattern", "urlPathTemplate"]
          .first(where: { members[$0] != nil })
        {
          throw fail("it has two URL rules (\(existing) and \(key)); a WireMock request has one")
        }
        members[key] = .string(value)
      }
      func setMethod(_ method: String) throws(MockBundleError) {
        if case .string(let existing)? = members["method"], existing != method {
          throw fail("it asks for two methods, \(existing) and \(method)")
        }
        members["method"] = .string(method)
      }
      for inner in nodes {
        switch inner {
        case .any: continue
        case .method(let method): try setMethod(method)
        case .pattern(let pattern):
          guard pattern.host == nil, pattern.scheme == nil, pattern.port == nil else {
            throw fail(
              "its pattern \(pattern.source) names a host; WireMock matches paths, not hosts")
          }
          let literal = pattern.segments.allSatisfy {
            if case .literal = $0 { return true }
            return false
          }
          if literal {
            try setURL("urlPath", Self.encodedPath(pattern.segments))
          } else {
            try setURL("urlPathPattern", Self.regex(pattern.segments))
          }
          for item in pattern.query {
            groups["queryParameters", default: [:]][item.name, default: []].append(
              Self.pattern(item.value.map { .equalTo($0) } ?? .matches(".*")))
          }
        case .query(let items):
          for item in items {
            groups["queryParameters", default: [:]][item.name, default: []].append(
              Self.pattern(item.value.map { .equalTo($0) } ?? .matches(".*")))
          }
        case .header(let name, let value):
          groups["headers", default: [:]][name, default: []].append(
            Self.pattern(value.map { .equalTo($0) } ?? .matches(".*")))
        case .body(let data):
          if let text = BodyCoding.text(of: data) {
            bodies.append(.object(["equalTo": .string(text)]))
          } else {
            bodies.append(.object(["binaryEqualTo": .string(data.base64EncodedString())]))
          }
        case .jsonBody(let value):
          bodies.append(.object(["equalToJson": value]))
        case .value(let target, let pattern):
          switch target {
          case .header(let name):
            groups["headers", default: [:]][name, default: []].append(Self.pattern(pattern))
          case .query(let name):
            groups["queryParameters", default: [:]][name, default: []].append(Self.pattern(pattern))
          case .cookie(let name):
            groups["cookies", default: [:]][name, default: []].append(Self.pattern(pattern))
          case .body:
            bodies.append(Self.pattern(pattern))
          }
        case .condition(let request as WireMockRequest):
          if let method = request.method { try setMethod(method) }
          if let (key, value) = request.url.member { try setURL(key, value) }
          if !request.pathParameters.isEmpty {
            var parameters: [String: JSONValue] = [:]
            for (name, pattern) in request.pathParameters {
              parameters[name] = Self.pattern(pattern)
            }
            members["pathParameters"] = .object(parameters)
          }
        case .condition(let condition):
          throw fail("its matcher \(condition) is a rule of another file format")
        case .predicate(let description, _):
          throw fail("its matcher RequestMatcher(\"\(description)\") { ... } runs a closure")
        case .regex(let source, _):
          throw fail(
            "its matcher .regex(\"\(source)\") tests the absolute URL; WireMock's urlPattern "
              + "tests the path and query")
        case .exactURL(let exact):
          throw fail("its matcher tests the whole URL \(exact.url.absoluteString), host included")
        case .either, .not:
          throw fail(
            "its matcher \(RequestMatcher.describe(inner)) uses || or !, which a WireMock request "
              + "cannot say across fields")
        case .invalid(let message):
          throw fail("its matcher is malformed: \(message)")
        case .all(let list):
          // Normalized nodes hold no nested lists; kept for completeness.
          for nested in list { _ = try request(nested, fail: fail) }
        }
      }
      for (key, group) in groups {
        var object: [String: JSONValue] = [:]
        for (name, patterns) in group {
          object[name] = patterns.count == 1 ? patterns[0] : .object(["and": .array(patterns)])
        }
        members[key] = .object(object)
      }
      if !bodies.isEmpty { members["bodyPatterns"] = .array(bodies) }
      return .object(members)
    }

    /// A value pattern as WireMock's JSON.
    static func pattern(_ pattern: ValuePattern) -> JSONValue {
      switch pattern.rule {
      case .equalTo(let value, let caseInsensitive):
        return caseInsensitive
          ? .object(["equalTo": .string(value), "caseInsensitive": .bool(true)])
          : .object(["equalTo": .string(value)])
      case .contains(let text): return .object(["contains": .string(text)])
      case .doesNotContain(let text): return .object(["doesNotContain": .string(text)])
      case .matches(let source, _): return .object(["matches": .string(source)])
      case .doesNotMatch(let source, _): return .object(["doesNotMatch": .string(source)])
      case .absent: return .object(["absent": .bool(true)])
      case .equalToJSON(let value, let options):
        var members: [String: JSONValue] = ["equalToJson": value]
        if options.ignoresArrayOrder { members["ignoreArrayOrder"] = .bool(true) }
        if options.ignoresExtraElements { members["ignoreExtraElements"] = .bool(true) }
        return .object(members)
      case .jsonPath(let path, let inner):
        guard let inner, case .object(var members) = Self.pattern(inner) else {
          return .object(["matchesJsonPath": .string(path.source)])
        }
        members["expression"] = .string(path.source)
        return .object(["matchesJsonPath": .object(members)])
      case .and(let list): return .object(["and": .array(list.map(Self.pattern))])
      case .or(let list): return .object(["or": .array(list.map(Self.pattern))])
      case .invalid(let message):
        return .object(["matches": .string("(?!)"), "_invalid": .string(message)])
      }
    }

    /// A literal path as sent: each segment percent-encoded.
    static func encodedPath(_ segments: [URLPattern.Segment]) -> String {
      "/"
        + segments.map { segment -> String in
          guard case .literal(let text) = segment else { return "" }
          return Self.encode(text)
        }.joined(separator: "/")
    }

    private static func encode(_ text: String) -> String {
      var allowed = CharacterSet.urlPathAllowed
      allowed.remove(charactersIn: "/;")
      return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A template as a regular expression of the path: `{name}` is one segment's text.
    static func regex(_ segments: [URLPattern.Segment]) -> String {
      "/"
        + segments.map { segment -> String in
          switch segment {
          case .literal(let text): return NSRegularExpression.escapedPattern(for: encode(text))
          case .parameter(_, let prefix, let suffix):
            return NSRegularExpression.escapedPattern(for: encode(prefix)) + "[^/]+"
              + NSRegularExpression.escapedPattern(for: encode(suffix))
          }
        }.joined(separator: "/")
    }

    /// A file name for the entry: its method and path in lower case, letters and digits.
    static func slug(_ matcher: RequestMatcher) -> String {
      var text = ""
      var lastWasDash = true
      for character in matcher.description.lowercased().prefix(60) {
        if character.isASCII && (character.isLetter || character.isNumber) {
          text.append(character)
          lastWasDash = false
        } else if !lastWasDash {
          text.append("-")
          lastWasDash = true
        }
      }
      while text.hasSuffix("-") { text.removeLast() }
      return text.isEmpty ? "mapping" : text
    }

    // MARK: - Responses

    /// A response as a mapping's `response`.
    mutating func response(
      _ response: StubResponse, index: Int, fail: (String) -> MockBundleError
    ) throws(MockBundleError) -> JSONValue {
      var members: [String: JSONValue] = [:]
      switch response.content {
      case .http(let body, let status, let headers):
        try ResponseMembers.wireMock.write(
          response, body: body, status: status, headers: headers, into: &members, fail: fail
        ) { data, name, members in
          bytes(data, name: name, index: index, into: &members)
        }
      case .error(let error):
        if let fault = StubResponse.Fault(error) {
          members["fault"] = .string(fault.rawValue)
        } else if (error as? URLError)?.code == .networkConnectionLost {
          members["fault"] = .string(StubResponse.Fault.connectionResetByPeer.rawValue)
        } else {
          throw fail(
            "its error \(error) is not one of WireMock's faults (CONNECTION_RESET_BY_PEER, "
              + "EMPTY_RESPONSE, MALFORMED_RESPONSE_CHUNK, RANDOM_DATA_THEN_CLOSE)")
        }
      case .raw:
        throw fail("it is given as is (StubResponse(data:response:error:))")
      case .proxy(let proxy):
        guard !proxy.hasSession else {
          throw fail(
            "it is proxied through a session of the test (.proxy(to:through:)); a mapping names "
              + "only a URL")
        }
        members["proxyBaseUrl"] = .string(proxy.baseText)
        if proxy.baseTemplate != nil {
          members["transformers"] = .array([.string("response-template")])
        }
        if !proxy.addedHeaders.isEmpty {
          members["additionalProxyRequestHeaders"] = .object(
            proxy.addedHeaders.mapValues { .string($0) })
        }
        if !proxy.removedHeaders.isEmpty {
          members["removeProxyRequestHeaders"] = .array(proxy.removedHeaders.map { .string($0) })
        }
      case .invalid(let message):
        throw fail("its response is malformed: \(message)")
      case .webSocket:
        throw fail(
          "it is a WebSocket script, which WireMock 2.35.1's mappings cannot express; write the "
            + "bundle in our format")
      }
      if let delay = response.delay {
        members["fixedDelayMilliseconds"] = .integer(Self.milliseconds(delay))
      }
      if let distribution = response.delayDistribution {
        switch distribution.kind {
        case .uniform(let lower, let upper):
          members["delayDistribution"] = .object([
            "type": .string("uniform"), "lower": .integer(Int64(lower)),
            "upper": .integer(Int64(upper)),
          ])
        case .logNormal(let median, let sigma, let maximum):
          var object: [String: JSONValue] = [
            "type": .string("lognormal"), "median": .double(median), "sigma": .double(sigma),
          ]
          if let maximum { object["maxValue"] = .double(maximum) }
          members["delayDistribution"] = .object(object)
        }
        // WireMock has no seed and refuses the member: written only when it is not the
        // default, 0.
        if distribution.seed != 0, case .object(var object)? = members["delayDistribution"] {
          object["seed"] = .integer(Int64(bitPattern: distribution.seed))
          members["delayDistribution"] = .object(object)
        }
      }
      if let part = response.dribble?.unstorablePart {
        throw fail("\(part) has no form in a WireMock mapping")
      }
      if let dribble = response.dribble {
        members["chunkedDribbleDelay"] = .object([
          "numberOfChunks": .integer(Int64(dribble.chunks)),
          "totalDuration": .integer(Self.milliseconds(dribble.duration)),
        ])
      }
      return .object(members)
    }

    /// A duration in whole milliseconds, clamped to what a JSON integer of ours holds.
    static func milliseconds(_ duration: Duration) -> Int64 {
      let (seconds, attoseconds) = duration.components
      let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
      if overflow { return seconds < 0 ? .min : .max }
      let (total, overflowAgain) = whole.addingReportingOverflow(
        attoseconds / 1_000_000_000_000_000)
      if overflowAgain { return seconds < 0 ? .min : .max }
      return total
    }

    /// A body of bytes: `body` when it is text, else `base64Body`, or (into a folder) a file
    /// of `__files/` for a body that came from a file or is not text.
    private mutating func bytes(
      _ data: Data, name: String?, index: Int, into members: inout [String: JSONValue]
    ) {
      let stem = "body-\(index + 1)"
      switch BodyPlacement.place(
        data, name: name, intoFolder: intoFolder, stem: stem, files: &files)
      {
      case .file(let path): members["bodyFileName"] = .string(path)
      case .text(let text): members["body"] = .string(text)
      case .base64(let base64): members["base64Body"] = .string(base64)
      }
    }
  }
}
