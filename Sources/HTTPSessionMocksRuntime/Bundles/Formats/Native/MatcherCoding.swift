import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Matchers as JSON: an object whose members are conditions that must all hold
/// (`{"method": "GET", "url": "/users/{login}", "headers": {"Accept": null}}`), or one of
/// `all`, `or`, `not` for the other combinations.
enum MatcherCoding {
  /// The members of a condition object, in the order their conditions are listed when read.
  static let order = [
    "any", "method", "url", "exactURL", "regex", "query", "headers", "body", "jsonBody",
    "mockingBird", "value", "or", "not", "invalid",
  ]

  static func encode(
    _ node: RequestMatcher.Node, unstorable: (String) -> MockBundleError
  ) throws(MockBundleError) -> JSONValue {
    let node = node.normalized
    let nodes: [RequestMatcher.Node]
    if case .all(let list) = node { nodes = list } else { nodes = [node] }
    var members: [String: JSONValue] = [:]
    var flat = !nodes.isEmpty
    var lastRank = -1
    var lastHeader: String?
    for inner in nodes {
      let (key, value) = try condition(inner, unstorable: unstorable)
      guard let rank = order.firstIndex(of: key) else {
        flat = false
        break
      }
      if key == "headers", rank == lastRank, case .header(let name, _) = inner {
        // Several headers share one member, in name order.
        guard let previous = lastHeader, previous < name else {
          flat = false
          break
        }
        if case .object(var headers) = members["headers"], case .object(let more) = value {
          headers.merge(more) { $1 }
          members["headers"] = .object(headers)
        }
        lastHeader = name
        continue
      }
      guard rank > lastRank else {
        flat = false
        break
      }
      if case .header(let name, _) = inner { lastHeader = name }
      lastRank = rank
      members[key] = value
    }
    if flat { return .object(members) }
    guard nodes.count != 1 else {
      throw unstorable(
        "its matcher \(RequestMatcher.describe(node)) has no form in the file format")
    }
    var list: [JSONValue] = []
    for inner in nodes { list.append(try encode(inner, unstorable: unstorable)) }
    return .object(["all": .array(list)])
  }

  private static func condition(
    _ node: RequestMatcher.Node, unstorable: (String) -> MockBundleError
  ) throws(MockBundleError) -> (String, JSONValue) {
    switch node {
    case .any: return ("any", .bool(true))
    case .method(let method): return ("method", .string(method))
    case .pattern(let pattern): return ("url", .string(pattern.source))
    case .exactURL(let exact): return ("exactURL", .string(exact.url.absoluteString))
    case .regex(let source, _): return ("regex", .string(source))
    case .query(let items):
      var members: [String: JSONValue] = [:]
      for item in items { members[item.name] = item.value.map { .string($0) } ?? .null }
      // Repeated names cannot share an object: keep them apart in an "all".
      return (members.count == items.count ? "query" : "", .object(members))
    case .header(let name, let value):
      return ("headers", .object([name: value.map { .string($0) } ?? .null]))
    case .body(let data):
      if let text = BodyCoding.text(of: data) { return ("body", .object(["text": .string(text)])) }
      return ("body", .object(["base64": .string(data.base64EncodedString())]))
    case .jsonBody(let value): return ("jsonBody", value)
    case .condition(let request as MockingBirdRequest):
      var members: [String: JSONValue] = [
        "method": .string(request.method), "url": .string(request.url),
      ]
      if !request.parameters.isEmpty {
        var parameters: [String: JSONValue] = [:]
        for item in request.parameters {
          parameters[item.name] = item.value.map { .string($0) } ?? .null
        }
        members["parameters"] = .object(parameters)
      }
      return ("mockingBird", .object(members))
    case .either(let a, let b):
      return (
        "or",
        .array([try encode(a, unstorable: unstorable), try encode(b, unstorable: unstorable)])
      )
    case .not(let inner): return ("not", try encode(inner, unstorable: unstorable))
    case .invalid(let message): return ("invalid", .string(message))
    case .predicate(let description, _):
      throw unstorable(
        "its matcher RequestMatcher(\"\(description)\") { ... } runs a closure; build it from the "
          + "matcher factories (.get, .url, .regex, .query, .header, .body, .jsonBody, &&, ||, !)")
    case .value(let target, let pattern):
      // The target, and the pattern in WireMock's form.
      var members: [String: JSONValue] = [
        "pattern": WireMockFormat.Writer.pattern(pattern)
      ]
      switch target {
      case .header(let name): members["header"] = .string(name)
      case .query(let name): members["query"] = .string(name)
      case .cookie(let name): members["cookie"] = .string(name)
      case .body: members["body"] = .bool(true)
      }
      return ("value", .object(members))
    case .condition(let condition):
      throw unstorable(
        "its matcher \(condition) is a rule of another file format, which this one cannot hold")
    case .all:
      return ("", .null)
    }
  }

  static func decode(_ cursor: JSONCursor) throws(MockBundleError) -> RequestMatcher.Node {
    let members = try cursor.members()
    let isRecorded = members.contains { $0.key == "exactURL" }
    if let all = try cursor.optional("all") {
      guard members.count == 1 else {
        throw cursor.fail("has \"all\" beside other members; put every condition in the list")
      }
      var nodes: [RequestMatcher.Node] = []
      for element in try all.elements() { nodes.append(try decode(element)) }
      return .all(nodes)
    }
    try cursor.rejectUnknownMembers(Set(order + ["all"]))
    guard !members.isEmpty else {
      throw cursor.fail(
        "expected at least one condition; use {\"any\": true} to match every request")
    }
    var nodes: [RequestMatcher.Node] = []
    for key in order {
      guard let member = try cursor.optional(key) else { continue }
      switch key {
      case "any":
        guard try member.bool() else { throw member.expected("true") }
        nodes.append(.any)
      case "method":
        let method = try member.string()
        guard !method.isEmpty else { throw member.expected("an HTTP method") }
        nodes.append(.method(method))
      case "url":
        let source = try member.string()
        do {
          nodes.append(.pattern(try URLPattern(parsing: source)))
        } catch {
          throw member.fail("the pattern \"\(source)\" is malformed: \(error.reason)")
        }
      case "regex":
        let source = try member.string()
        let matcher = RequestMatcher.regex(source)
        if case .invalid = matcher.node {
          throw member.fail("the regular expression /\(source)/ does not compile")
        }
        nodes.append(matcher.node)
      case "query":
        var items: [(name: String, value: String?)] = []
        for name in try member.keys().sorted() {
          items.append((name, try member.required(name, "").stringOrNull()))
        }
        nodes.append(.query(items))
      case "headers":
        for name in try member.keys().sorted() {
          nodes.append(.header(name, try member.required(name, "").stringOrNull()))
        }
      case "body":
        try member.rejectUnknownMembers(["text", "base64"])
        var data: Data?
        if let text = try member.optional("text") {
          data = Data(try text.string().utf8)
        } else if let base64 = try member.optional("base64") {
          data = Data(base64Encoded: try base64.string())
          if data == nil { throw base64.expected("base64 text") }
        }
        if let data {
          // A recorded request's body (beside "exactURL", which only recordings write) is
          // matched as HAR bodies are: a JSON object or array as a JSON value.
          nodes.append(isRecorded ? RequestMatcher.recordedBody(data, mimeType: nil) : .body(data))
        } else {
          throw member.fail("expected a member \"text\" or \"base64\"")
        }
      case "jsonBody":
        nodes.append(.jsonBody(try member.json()))
      case "mockingBird":
        try member.rejectUnknownMembers(["method", "url", "parameters"])
        var parameters: [MockingBirdRequest.Parameter] = []
        if let given = try member.optional("parameters") {
          for name in try given.keys().sorted() {
            parameters.append(.init(name: name, value: try given.required(name, "").stringOrNull()))
          }
        }
        nodes.append(
          .condition(
            MockingBirdRequest(
              method: try member.required("method", "an HTTP method").string(),
              url: try member.required("url", "://host[:port]/path").string(),
              parameters: parameters)))
      case "value":
        try member.rejectUnknownMembers(["header", "query", "cookie", "body", "pattern"])
        let pattern = try WireMockFormat.pattern(try member.required("pattern", "a value pattern"))
        let target: ValueTarget
        if let name = try member.optional("header") {
          target = .header(try name.string())
        } else if let name = try member.optional("query") {
          target = .query(try name.string())
        } else if let name = try member.optional("cookie") {
          target = .cookie(try name.string())
        } else if try member.optional("body")?.bool() == true {
          target = .body
        } else {
          throw member.fail("expected a member \"header\", \"query\", \"cookie\" or \"body\"")
        }
        nodes.append(.value(target, pattern))
      case "or":
        let sides = try member.elements()
        guard sides.count == 2 else { throw member.expected("a list of two matchers") }
        nodes.append(.either(try decode(sides[0]), try decode(sides[1])))
      case "not":
        nodes.append(.not(try decode(member)))
      case "invalid":
        nodes.append(.invalid(try member.string()))
      case "exactURL":
        let text = try member.string()
        guard let url = URL(string: text), let exact = ExactURL(url) else {
          throw member.expected("an absolute URL with a scheme and a host")
        }
        nodes.append(.exactURL(exact))
      default: break
      }
    }
    return nodes.count == 1 ? nodes[0] : .all(nodes)
  }
}
