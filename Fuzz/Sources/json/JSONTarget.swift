import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The JSON body matcher and the JSON responses, on arbitrary bodies.
//
// Input: a document, optionally followed by the byte 0x1E (record separator) and a second
// document. The first is the expected JSON of `.jsonBody`, the second the request's body (the
// first again when there is no second).

/// One input for libFuzzer: a JSON document and a body, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let (first, second) = Data(bytes: start, count: count).split(once: 0x1E)
  let body = second ?? first
  let expected = try? JSONValue(parsing: first)
  let actual = second == nil ? expected : try? JSONValue(parsing: body)
  if let expected {
    checkValue(expected)
    checkMatcher(expected, body: body, actual: actual)
  } else {
    checkNotJSON(first)
  }
  checkJSONObject(first, parsed: expected)
  checkBodyMessages(body)
  checkFileParser(first, parsed: expected)
  return 0
}

/// The package's parser agrees with Foundation: what JSONSerialization reads is JSON to it, and
/// a document JSONDecoder reads (with no key twice) reads as the same value (`JSONValue` read
/// bodies with JSONDecoder before it read them with the package's parser: ``FoundationJSON``
/// keeps that reading as the oracle).
func checkFileParser(_ data: Data, parsed: JSONValue?) {
  // Foundation's scanner trapped describing the error of a document nested thousands deep
  // (why bodies are no longer read by it): it reads only what the package's parser accepts.
  if let cursor = try? JSONCursor.parse(data, source: "in", duplicates: .refused),
    (try? cursor.json()) != nil, !holdsLongNumber(cursor.node),
    let foundation = try? JSONDecoder().decode(FoundationJSON.self, from: data).value
  {
    check(
      parsed.map { $0 == foundation && $0.description == foundation.description } ?? false,
      "JSONValue read \(parsed.map(String.init(describing:)) ?? "an error"), JSONDecoder "
        + "\(foundation)")
  }
  let cursor = try? JSONCursor.parse(data, source: "in", duplicates: .refused)
  if (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil {
    check(
      (try? JSONCursor.parse(data, source: "in", duplicates: .lastWins)) != nil,
      "JSONSerialization reads a document the file parser calls not JSON")
  }
  guard let parsed, let cursor, let value = try? cursor.json() else { return }
  check(value == parsed, "the file parser read \(value), JSONDecoder \(parsed)")
  // A recorded body of this value is matched as it: any key order, any spacing.
  if case .jsonBody(let recorded) = RequestMatcher.recordedBody(data, mimeType: "application/json")
  {
    check(recorded == parsed, "a recorded body parsed as \(recorded), not \(parsed)")
  }
}

/// A parsed document equals itself, and its description, when it is plain JSON, parses back to it.
func checkValue(_ value: JSONValue) {
  check(value == value, "\(value) is not equal to itself")
  let text = value.description
  // The description escapes only quotes and backslashes: it is JSON when no string holds a
  // control character.
  if !text.unicodeScalars.contains(where: { $0.value < 0x20 }) {
    let reparsed = try? JSONValue(parsing: Data(text.utf8))
    check(
      reparsed == value,
      "\(text) parses back as \(reparsed.map(String.init(describing:)) ?? "an error")")
  }
}

/// `.jsonBody(value)` matches a body exactly when the body's JSON equals `value`, and always
/// matches the document `value` was parsed from.
func checkMatcher(_ expected: JSONValue, body: Data, actual: JSONValue?) {
  let matcher = RequestMatcher.post("/items").jsonBody(EncodableJSON(expected))
  check(matcher.problems.isEmpty, "jsonBody(\(expected)) has problems: \(matcher.problems)")
  var request = makeRequest("https://example.com/items")
  request.httpMethod = "POST"
  request.httpBody = body
  let equal = actual.map { $0 == expected } ?? false
  if let actual { check((actual == expected) == (expected == actual), "== is not symmetric") }
  let evaluation = matcher.evaluate(RequestFacts(request))
  check(
    evaluation.matched == equal,
    "jsonBody(\(expected)) matched \(evaluation.matched) a body that is "
      + "\(actual.map(String.init(describing:)) ?? "not JSON"): \(evaluation.mismatches)")
  if !equal { _ = NearMiss.requestReport([request], against: matcher, .default) }

  let mock = URLSessionMock()
  mock.unmatchedRequestPolicy = .respond(with: .status(404))
  mock.stub(matcher, with: .status(201))
  let answer = send(request, to: mock)
  check(answer.status == (equal ? 201 : 404), "the mock answered \(answer.status ?? 0)")
}

/// A body that is not JSON never matches a JSON matcher, and says so.
func checkNotJSON(_ body: Data) {
  var request = makeRequest("https://example.com/items")
  request.httpBody = body
  let evaluation = RequestMatcher.jsonBody(["a": 1]).evaluate(RequestFacts(request))
  check(!evaluation.matched, "a body that is not JSON matched")
  check(evaluation.mismatches.count == 1, "mismatches \(evaluation.mismatches)")
}

/// `StubResponse.jsonObject` (and the `jsonDict:` mock) answer with the same JSON as the
/// `JSONSerialization` object they were given, or report that it cannot be JSON.
func checkJSONObject(_ data: Data, parsed: JSONValue?) {
  let request = makeRequest("https://example.com/object")
  // The parsed document as a JSONSerialization object (made here, not parsed by
  // JSONSerialization, which differs from JSONDecoder on duplicate keys and drops a leading
  // U+FEFF from strings) comes back unchanged.
  if let parsed, let body = jsonBody(parsed.object, request) {
    let reparsed = try? JSONValue(parsing: body)
    check(
      reparsed == parsed,
      "jsonObject answered \(reparsed.map(String.init(describing:)) ?? "not JSON") for \(parsed)")
  }
  guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
  else { return }
  let body = jsonBody(object, request)
  if let body {
    check(
      (try? JSONValue(parsing: body)) != nil,
      "the body of .jsonObject is not JSON: \(BodyText(body))")
  }
  if let dictionary = object as? [String: Any] {
    let mock = URLSessionMock(jsonDict: dictionary)
    check(mock != nil, "URLSessionMock(jsonDict:) refused a parsed object")
    if let mock {
      let answer = send(request, to: mock)
      check(answer.status == 200, "the jsonDict mock answered \(answer.status ?? 0)")
    }
  }
}

/// The body `.jsonObject` answers with, or `nil` when it says the object cannot be JSON.
func jsonBody(_ object: Any, _ request: URLRequest) -> Data? {
  switch StubResponse.json(object, status: 200).resolve(for: request) {
  case .answer(let answer):
    check(answer.error == nil, "an error for a JSON object")
    check((answer.response as? HTTPURLResponse)?.statusCode == 200, "not status 200")
    // Top-level fragments (a string, a number, null) are accepted, as JSON allows them.
    check(
      JSONSerialization.isValidJSONObject([object]), "a body for an object that is not valid")
    return answer.data ?? Data()
  case .invalid(let problem):
    check(!JSONSerialization.isValidJSONObject([object]), "jsonObject refused a valid object")
    check(!problem.isEmpty, "no reason")
    return nil
  case .webSocket:
    check(false, "jsonObject resolved to a WebSocket script")
    return nil
  }
}

/// Messages quote any body, text or binary, without trapping.
func checkBodyMessages(_ body: Data) {
  _ = BodyText(body).description
  var request = makeRequest("https://example.com/items")
  request.httpBody = body
  let matcher = RequestMatcher.body(Data("{}".utf8))
  check(matcher.matches(request) == (body == Data("{}".utf8)), "body() disagrees with ==")
  _ = NearMiss.requestReport([request], against: matcher, .default)
  _ = NearMiss.describe(request, .default)
  switch StubResponse.data(body, status: 200).resolve(for: request) {
  case .answer(let answer): check(answer.data == body, "data() changed the body")
  case .invalid: check(false, "data() is invalid")
  case .webSocket: check(false, "data() resolved to a WebSocket script")
  }
}

extension JSONValue {
  /// The value as `JSONSerialization` objects.
  var object: Any {
    switch self {
    case .null: return NSNull()
    case .bool(let value): return value
    case .integer(let value): return Int(value)
    case .double(let value): return value
    case .string(let value): return value
    case .array(let values): return values.map(\.object)
    case .object(let members): return members.mapValues(\.object)
    }
  }
}

/// A parsed document encoded again, so that `.jsonBody` can take it.
struct EncodableJSON: Encodable, Sendable {
  let value: JSONValue
  init(_ value: JSONValue) { self.value = value }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch value {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let values): try container.encode(values.map(EncodableJSON.init))
    case .object(let members): try container.encode(members.mapValues(EncodableJSON.init))
    }
  }
}

/// A document as `JSONDecoder` reads it into a ``JSONValue``: integers as `Int64` first, then
/// `Double`s (how `JSONValue` read request bodies before the package's parser did).
struct FoundationJSON: Decodable {
  let value: JSONValue

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      value = .null
    } else if let flag = try? container.decode(Bool.self) {
      value = .bool(flag)
    } else if let number = try? container.decode(Int64.self) {
      value = .integer(number)
    } else if let number = try? container.decode(Double.self) {
      value = .double(number)
    } else if let text = try? container.decode(String.self) {
      value = .string(text)
    } else if let values = try? container.decode([FoundationJSON].self) {
      value = .array(values.map(\.value))
    } else {
      value = .object(try container.decode([String: FoundationJSON].self).mapValues(\.value))
    }
  }
}

/// Whether a number in `node` has more than 15 significant digits: there `JSONNumber.value`
/// and JSONDecoder may tell a whole number apart (`9007199254740993.5`: JSONDecoder truncates
/// the digits to 9007199254740993, the package takes the Double, 9007199254740994).
func holdsLongNumber(_ node: JSONNode) -> Bool {
  switch node {
  case .number(let literal):
    let mantissa = literal.prefix { $0 != "e" && $0 != "E" }.filter(\.isNumber)
    return mantissa.drop { $0 == "0" }.count > 15
  case .array(let values): return values.contains(where: holdsLongNumber)
  case .object(let members): return members.contains { holdsLongNumber($0.value) }
  default: return false
  }
}
