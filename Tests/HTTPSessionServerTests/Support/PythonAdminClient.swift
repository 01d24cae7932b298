import Foundation
import TestSupport

/// WireMock's own admin client, the PyPI package `wiremock` 2.7.0 (which ships beside the real
/// WireMock's jar: `Tests/fetch-wiremock` fetches both), run by `python3` against a server.
enum PythonAdminClient {
  /// Where `python3` is, or `nil`.
  static let python = executableOnPath("python3")

  /// Why the client cannot run here, or `nil` when it can: for the note of a skipped test.
  static let unavailableReason: String? = {
    guard let python else { return "python3 is not installed" }
    guard let path = RealWireMock.pythonPath else {
      return "the Python wiremock client is missing: run Tests/fetch-wiremock"
    }
    guard
      let child = try? ChildProcess(
        python, ["-c", "import requests, wiremock"], environment: environment(path)),
      child.waitForExit(timeout: 60) == 0
    else {
      return "python3 cannot import requests and wiremock (pip install requests, then run "
        + "Tests/fetch-wiremock)"
    }
    return nil
  }()

  private static func environment(_ path: URL) -> [String: String] {
    var environment = cleanEnvironment()
    environment["PYTHONPATH"] = path.path
    return environment
  }

  /// Runs the script that drives the admin API of the server at `base` through the client:
  /// it adds a mapping, sends requests, counts, finds and lists them, reads, replaces and
  /// removes the mapping, resets the journal and the scenarios, and removes every mapping.
  /// Returns what the client read, as the script printed it (one JSON object), or throws
  /// with what it wrote to standard error when it failed.
  static func run(against base: URL) throws -> String {
    guard let python, let path = RealWireMock.pythonPath else {
      throw ClientError(description: unavailableReason ?? "the client is unavailable")
    }
    let child = try ChildProcess(
      python, ["-c", script, base.absoluteString], environment: environment(path))
    defer { child.stop() }
    guard child.waitForExit(timeout: 120) == 0 else {
      throw ClientError(description: "the client failed: \(child.errorText)")
    }
    return child.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  struct ClientError: Error, CustomStringConvertible {
    let description: String
  }

  /// Runs `body` on a thread of its own and returns what it returns: the waits on a child
  /// process block, and must not hold one of the few threads of Swift's cooperative pool that
  /// the server's waits and the other tests run on.
  static func offThePool<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result)
    async throws -> Result
  {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread { continuation.resume(with: Swift.Result { try body() }) }
    }
  }

  static let script = #"""
    import json, sys
    import requests
    from wiremock.constants import Config
    from wiremock.resources.mappings import Mapping, MappingRequest, MappingResponse, HttpMethods
    from wiremock.resources.mappings.resource import Mappings
    from wiremock.resources.requests.resource import Requests
    from wiremock.resources.near_misses import NearMissMatchPatternRequest
    from wiremock.resources.scenarios.resource import Scenarios

    base = sys.argv[1].rstrip("/")
    Config.base_url = base + "/__admin"
    out = {}
    created = Mappings.create_mapping(Mapping(
        request=MappingRequest(method=HttpMethods.GET, url="/hello"),
        response=MappingResponse(status=200, body="hi")))
    out["created"] = [created.request.url, created.response.status, created.response.body]
    out["hello"] = [requests.get(base + "/hello").text for _ in range(2)]
    out["nope"] = requests.get(base + "/nope").status_code
    pattern = NearMissMatchPatternRequest(url="/hello", method="GET")
    out["count"] = Requests.get_matching_request_count(pattern).count
    out["found"] = [r.url for r in Requests.get_matching_requests(pattern).requests]
    every = Requests.get_all_received_requests()
    out["total"] = every.meta.total
    out["listed"] = [
        [r.request.method, r.request.url, r.response_definition.status] for r in every.requests]
    out["limited"] = len(Requests.get_all_received_requests(limit=1).requests)
    out["one"] = Requests.get_request(every.requests[0].id).request.url
    out["unmatched"] = [r.url for r in Requests.get_unmatched_requests().requests]
    out["mappings"] = Mappings.retrieve_all_mappings().meta.total
    out["mapping"] = Mappings.retrieve_mapping(created.id).request.url
    created.response = MappingResponse(status=201, body="changed")
    Mappings.update_mapping(created)
    answer = requests.get(base + "/hello")
    out["updated"] = [answer.status_code, answer.text]
    Mappings.delete_mapping(created.id)
    out["deleted"] = Mappings.retrieve_all_mappings().meta.total
    Requests.reset_request_journal()
    out["afterReset"] = Requests.get_all_received_requests().meta.total
    Scenarios.reset_all_scenarios()
    Mappings.create_mapping(Mapping(
        request=MappingRequest(method=HttpMethods.GET, url="/x"),
        response=MappingResponse(status=204)))
    Mappings.delete_all_mappings()
    out["afterDeleteAll"] = Mappings.retrieve_all_mappings().meta.total
    Mappings.reset_mappings()
    print(json.dumps(out, sort_keys=True))
    """#
}
