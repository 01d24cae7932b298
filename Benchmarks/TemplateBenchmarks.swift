import Foundation
import HTTPSessionKit
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Response templating through the injected mock: a stub whose body reads five request fields
/// and a `jsonPath` of the request body, beside the same stub answering a fixed body.
extension Scenario {
  static func templateScenarios(quick: Bool) -> [Scenario] {
    let perRequest = quick ? 5_000 : 30_000
    return [
      Scenario(name: "stub-untemplated", metric: .nsPerRequest, requests: perRequest) { count in
        templateLoop(count, templated: false)
      },
      Scenario(name: "stub-templated", metric: .nsPerRequest, requests: perRequest) { count in
        templateLoop(count, templated: true)
      },
    ]
  }

  /// The template of (22): five request fields and a `jsonPath`.
  static let templateBody =
    #"{"method": "{{request.method}}", "path": "{{request.path}}", "id": "{{request.pathSegments.[1]}}", "#
    + #""q": "{{request.query.q}}", "user": "{{request.headers.X-User}}", "#
    + #""name": "{{jsonPath request.body '$.name'}}"}"#

  static func templateLoop(_ count: Int, templated: Bool) -> Workload {
    let mock = URLSessionMock()
    let plain = StubResponse.text(
      #"{"method": "POST", "path": "/users/42", "id": "42", "q": "x", "user": "ada", "name": "Ada"}"#
    )
    mock.stub(.post("/users/{id}"), with: templated ? .text(templateBody).templated() : plain)
    var request = URLRequest(url: URL(string: "https://api.example.com/users/42?q=x")!)
    request.httpMethod = "POST"
    request.setValue("ada", forHTTPHeaderField: "X-User")
    request.httpBody = Data(#"{"name": "Ada", "id": 42}"#.utf8)
    let name = templated ? "stub-templated" : "stub-untemplated"
    // Both answer the same 91 bytes: the template renders the plain body.
    let size = 91
    let sink = Sink()
    let handler = sink.handler
    return Workload(
      sync: { resumeAll(mock, request, count: count, handler) },
      check: {
        guard sink.calls == count, sink.bytes == count * size, sink.failures == 0 else {
          throw BenchmarkError(
            description: "\(name): expected \(count) answers of \(size) bytes, got \(sink.calls) "
              + "answers, \(sink.bytes) bytes, \(sink.failures) failures")
        }
      })
  }
}
