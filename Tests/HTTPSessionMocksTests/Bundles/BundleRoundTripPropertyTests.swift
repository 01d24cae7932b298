import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Random declarative stubs and requests from a seeded generator: a bundle written and read back
/// equals the original, and a mock loaded from it answers every request as one loaded from the
/// original does.
@Suite struct BundleRoundTripPropertyTests {
  static let seeds: [UInt64] = Array(1...40).map { $0 &* 0x9E37_79B9 }

  @Test func writtenAndReadBundlesAreEqualAndAnswerAlike() throws {
    let folder = try makeTemporaryFolder()
    defer { removeFolder(folder) }
    var answered = 0
    var sent = 0
    for seed in Self.seeds {
      try check(seed: seed, in: folder, answered: &answered, sent: &sent)
    }
    // The generator must hit stubs often enough for the comparison to mean something.
    #expect(sent == Self.seeds.count * 3 * 25)
    #expect(answered * 10 >= sent, "only \(answered) of \(sent) requests matched a stub")
  }

  private func check(seed: UInt64, in folder: URL, answered: inout Int, sent: inout Int) throws {
    var random = SplitMix64(seed: seed)
    for round in 0..<5 {
      let routable = round % 2 == 0
      let bundle = BundleGenerator.bundle(&random, timed: !routable)
      let name = "s\(seed)-r\(round)"
      let target = folder.appendingPathComponent(random.chance(50) ? name : name + ".json")
      try bundle.write(to: target)
      let reloaded = try MockBundle(contentsOf: target)
      #expect(reloaded == bundle, "seed \(seed) round \(round)")
      guard routable else { continue }
      let original = URLSessionMock(bundle: bundle)
      let copy = URLSessionMock(bundle: reloaded)
      for mock in [original, copy] { mock.unmatchedRequestPolicy = .respond(with: .status(599)) }
      for _ in 0..<25 {
        let request = BundleGenerator.request(&random)
        let expected = Outcome(route(original, request))
        let actual = Outcome(route(copy, request))
        sent += 1
        if expected.status != 599 { answered += 1 }
        #expect(
          expected == actual,
          "seed \(seed) round \(round): \(request.httpMethod ?? "") \(request.url?.absoluteString ?? "")"
        )
      }
      #expect(original.scenarioState == copy.scenarioState)
    }
  }

  /// What a request got, with JSON bodies compared as JSON (a stored JSON body is rewritten with
  /// sorted keys and without JSONEncoder's `\/`) and `Content-Length` left out for them (HEAD
  /// answers included).
  struct Outcome: Equatable {
    var status: Int?
    var error: URLError.Code?
    var body: Data
    var json: NSObject?
    var headers: [String: String]

    init(_ answer: RoutedAnswer) {
      status = answer.status
      error = answer.urlErrorCode
      body = answer.data ?? Data()
      json =
        (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])) as? NSObject
      var fields = (answer.response?.allHeaderFields as? [String: String]) ?? [:]
      if json != nil || fields["Content-Type"] == "application/json" {
        fields["Content-Length"] = nil
      }
      headers = fields
    }

    static func == (lhs: Outcome, rhs: Outcome) -> Bool {
      guard lhs.status == rhs.status, lhs.error == rhs.error, lhs.headers == rhs.headers else {
        return false
      }
      if let left = lhs.json, let right = rhs.json { return left.isEqual(right) }
      return lhs.body == rhs.body
    }
  }
}

/// Random stubs from the public factories, and requests that hit them often.
enum BundleGenerator {
  static let segments = ["users", "a b", "ünï", "x.json"]
  static let hosts = ["https://api.test", "http://a.test:8080"]

  static func path(_ random: inout SplitMix64, template: Bool) -> String {
    let count = random.int(in: 1...2)
    var parts: [String] = []
    for index in 0..<count {
      if template && index == count - 1 && random.chance(40) {
        parts.append(random.chance(50) ? "{id}" : "{name}.json")
      } else {
        parts.append(random.pick(segments))
      }
    }
    return "/" + parts.joined(separator: "/") + (random.chance(10) ? "/" : "")
  }

  static func matcher(_ random: inout SplitMix64, depth: Int = 0) -> RequestMatcher {
    let pattern = (random.chance(30) ? random.pick(hosts) : "") + path(&random, template: true)
    var matcher: RequestMatcher
    switch random.int(in: 0...9) {
    case 0: matcher = .url(pattern)
    case 1: matcher = .post(pattern)
    case 2: matcher = .method(random.pick(["PUT", "DELETE", "OPTIONS", "PATCH"]), pattern)
    case 3: matcher = .regex("^https?://[a-z.]+(:[0-9]+)?/" + random.pick(segments).prefix(2))
    case 4 where depth == 0:
      matcher = Self.matcher(&random, depth: 1) || Self.matcher(&random, depth: 1)
    case 5 where depth == 0: matcher = .get(pattern) && !Self.matcher(&random, depth: 1)
    case 6: matcher = .any
    default: matcher = .get(pattern)
    }
    if random.chance(25) {
      matcher = matcher.query(["page": random.chance(50) ? nil : String(random.int(in: 1...2))])
    }
    if random.chance(20) { matcher = matcher.header("X-Mode", random.chance(50) ? nil : "on") }
    if random.chance(10) {
      matcher = matcher.body(Data(random.pick(["a", "b", "\u{0}\u{1}"]).utf8))
    }
    if random.chance(10) {
      matcher = matcher.jsonBody(Account(login: random.pick(["a", "b"]), id: 1))
    }
    return matcher
  }

  static func response(_ random: inout SplitMix64, timed: Bool) -> StubResponse {
    let headers: [String: String] =
      random.chance(30) ? ["X-Stub": String(random.int(in: 0...9))] : [:]
    var response: StubResponse
    switch random.int(in: 0...6) {
    case 0: response = .status(random.pick([200, 201, 204, 404, 500]), headers: headers)
    case 1: response = .text(random.pick(["ok", "line\nbreak", "ünï \"q\""]), headers: headers)
    case 2:
      response = .data(
        Data((0..<random.int(in: 0...6)).map { _ in UInt8(random.int(in: 0...255)) }),
        headers: headers)
    case 3:
      response = .json(
        Account(login: random.pick(["octocat", "a/b"]), id: random.int(in: 0...99)),
        headers: headers)
    case 4:
      response = .json(
        ["n": random.int(in: 0...9), "list": [true, "x"], "half": 0.5], headers: headers)
    case 5:
      response = .error(URLError(random.pick([.timedOut, .notConnectedToInternet, .cancelled])))
    default: response = .status(302, headers: ["Location": "https://api.test/users"])
    }
    if timed && random.chance(40) {
      response = response.delayed(by: .milliseconds(random.int(in: 1...5000)))
    }
    if timed && random.chance(20) {
      response = response.dribbled(
        inChunks: random.int(in: 1...4), over: .seconds(random.int(in: 1...3)))
    }
    return response
  }

  static func bundle(_ random: inout SplitMix64, timed: Bool) -> MockBundle {
    var bundle = MockBundle()
    for _ in 0..<random.int(in: 1...6) {
      let matcher = matcher(&random)
      let responses = (0..<random.int(in: 1...3)).map { _ in response(&random, timed: timed) }
      bundle.stub(
        matcher, with: responses, times: random.chance(20) ? random.int(in: 0...2) : nil,
        whenState: random.chance(15) ? random.pick(["started", "on"]) : nil,
        willSetState: random.chance(15) ? random.pick(["started", "on"]) : nil)
    }
    return bundle
  }

  static func request(_ random: inout SplitMix64) -> URLRequest {
    var path = path(&random, template: false)
    if random.chance(20) {
      path = path.replacingOccurrences(of: "users", with: "users/" + random.pick(segments))
    }
    let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
    let query = random.chance(30) ? "?page=\(random.int(in: 1...2))" : ""
    var headers: [String: String] = [:]
    if random.chance(30) { headers["X-Mode"] = random.pick(["on", "off"]) }
    let body: Data? =
      random.chance(20)
      ? Data(random.pick(["a", #"{"login":"a","id":1}"#, "\u{0}\u{1}"]).utf8) : nil
    return routingRequest(
      random.pick(["GET", "GET", "GET", "POST", "PUT", "HEAD"]),
      random.pick(hosts) + encoded + query, headers: headers, body: body)
  }
}
