import Foundation
import HTTPSessionKit
import HTTPSessionMocks

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The HAR scenarios: loading a large recording, and routing among its replayed stubs.
///
/// The recording is generated once per run: 5,000 entries of about 2 KB each (request and
/// response headers as a browser writes them, a JSON body), about 10 MB in all. The middle
/// entry answers with the canned body, so that the sink's check proves the route. `HAR_ENTRIES`
/// in the environment changes the count, for a profiler (`HAR_ENTRIES=300 valgrind ...
/// --profile har-load-5000`), where generating 5,000 entries would take minutes.
enum HARBenchmark {
  static let entryCount = Int(ProcessInfo.processInfo.environment["HAR_ENTRIES"] ?? "") ?? 5_000
  static let middle = entryCount / 2

  /// The request the middle entry recorded.
  static let request = URLRequest(
    url: URL(string: "https://api.example.com/items/\(middle)?page=1&per_page=50")!)

  /// The generated HAR document.
  static let document: Data = {
    let filler = String(repeating: "lorem ipsum dolor sit amet ", count: 56)
    var entries: [[String: Any]] = []
    entries.reserveCapacity(entryCount)
    for index in 0..<entryCount {
      let body =
        index == middle
        ? String(decoding: Fixture.body, as: UTF8.self)
        : #"{"id":\#(index),"name":"item \#(index)","description":"\#(filler)"}"#
      let header = { (name: String, value: String) in ["name": name, "value": value] }
      entries.append([
        "startedDateTime": "2026-11-30T10:00:00.000Z", "time": 12.5,
        "_initiator": ["type": "script"], "_priority": "High", "cache": [String: Any](),
        "request": [
          "method": "GET",
          "url": "https://api.example.com/items/\(index)?page=1&per_page=50",
          "httpVersion": "http/2.0", "cookies": [Any](), "headersSize": -1, "bodySize": 0,
          "headers": [
            header(":authority", "api.example.com"), header(":method", "GET"),
            header("accept", "application/json"), header("accept-language", "en-GB,en;q=0.9"),
            header("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"),
            header("referer", "https://app.example.com/items"),
          ],
          "queryString": [
            ["name": "page", "value": "1"], ["name": "per_page", "value": "50"],
          ],
        ] as [String: Any],
        "response": [
          "status": 200, "statusText": "", "httpVersion": "http/2.0", "cookies": [Any](),
          "headers": [
            header("content-type", "application/json"), header("content-encoding", "br"),
            header("cache-control", "private, max-age=60"), header("etag", "W/\"\(index)\""),
            header("x-request-id", UUID().uuidString), header("vary", "Accept, Accept-Encoding"),
          ],
          "content": ["size": body.utf8.count, "mimeType": "application/json", "text": body],
          "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 900,
        ] as [String: Any],
        "timings": [
          "blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": 12, "receive": 0.5,
        ],
      ])
    }
    let root: [String: Any] = [
      "log": [
        "version": "1.2", "creator": ["name": "WebInspector", "version": "537.36"],
        "entries": entries,
      ] as [String: Any]
    ]
    // swift-format-ignore: NeverUseForceTry
    return try! JSONSerialization.data(withJSONObject: root)
  }()

  /// The document in a file, as a test would load it.
  static let file: URL = {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("benchmark-\(ProcessInfo.processInfo.processIdentifier).har")
    // swift-format-ignore: NeverUseForceTry
    try! document.write(to: url)
    return url
  }()

  /// The bundle the document loads as, for the routing scenario.
  static let bundle: MockBundle = {
    // swift-format-ignore: NeverUseForceTry
    try! MockBundle(contentsOf: file)
  }()
}

extension Scenario {
  /// `har-load-5000` beside `har-parse-5000`, and `mock-5000-replayed`.
  static func harScenarios(quick: Bool) -> [Scenario] {
    let perRequest = quick ? 5_000 : 30_000
    return [
      Scenario(name: "har-parse-5000", metric: .wallMilliseconds, requests: 1) { _ in
        let data = HARBenchmark.document
        var parsed: Any?
        return Workload(
          sync: { parsed = try JSONSerialization.jsonObject(with: data) },
          check: {
            guard parsed is [String: Any] else {
              throw BenchmarkError(description: "har-parse-5000: the document did not parse")
            }
          })
      },
      Scenario(name: "har-load-5000", metric: .wallMilliseconds, requests: 1) { _ in
        let file = HARBenchmark.file
        var mock: URLSessionMock?
        return Workload(
          sync: { mock = URLSessionMock(bundle: try MockBundle(contentsOf: file)) },
          check: {
            guard let mock else { throw BenchmarkError(description: "har-load-5000: no mock") }
            let sink = Sink()
            mock.dataTask(with: HARBenchmark.request, completionHandler: sink.handler).resume()
            try sink.check("har-load-5000", expected: 1)
          })
      },
      Scenario(name: "mock-5000-replayed", metric: .nsPerRequest, requests: perRequest) { count in
        let mock = URLSessionMock(bundle: HARBenchmark.bundle)
        return completionHandlerLoop(
          mock, count, name: "mock-5000-replayed", request: HARBenchmark.request)
      },
    ]
  }
}
