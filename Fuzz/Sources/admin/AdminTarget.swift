import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The loopback server's admin API (with the `HTTPSessionServer` sources), in process: every
// admin route gets the input's body, as a client's request would bring it, through the API's
// own entry point (`AdminAPI.answer(_:to:)`), with no socket.
//
// Input: the first line is a path segment (a mapping or request id, a scenario name, a `limit`
// or `since` value: sent as given when the URL takes it, else percent-encoded); the rest is the
// body. Checked: nothing traps; every answer is one of the statuses the API documents, with a
// JSON object for its body; a 422 carries WireMock's error document, whose pointer (when there
// is one) is a JSON pointer; the mappings the API accepted list, read back and save (500, a
// mapping accepted that cannot be written, is a finding); a `DELETE` of a segment that is not
// exactly the installed mapping's id leaves that mapping. The wait is decided by its body alone
// (`startWait`): a wait the body asks for is not waited for. Each input gets a mock and an API
// of its own.

private let base = "http://127.0.0.1:8080/__admin"
/// The mapping every input finds installed, so that `PUT` and `DELETE` of an id reach one.
private let knownID = "8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7"
// swift-format-ignore: NeverForceUnwrap
private let knownUUID = UUID(uuidString: knownID)!
private let known =
  #"{"id": "\#(knownID)", "name": "known", "scenarioName": "s", "requiredScenarioState": "Started", "newScenarioState": "next", "request": {"method": "POST", "urlPath": "/x"}, "response": {"status": 201, "body": "made"}}"#

/// A WireMock root for `POST /__admin/mappings/save`, made once per process.
private let root: URL = {
  let folder = FileManager.default.temporaryDirectory
    .appendingPathComponent("fuzz-admin-\(ProcessInfo.processInfo.processIdentifier)")
  try? FileManager.default.createDirectory(
    at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
  return folder
}()

/// A mock served with the admin API, made anew for each input (so that what one input leaves
/// never leaks into the next, and everything an input made is freed when it ends).
private func makeAdmin() -> AdminAPI {
  let mock = URLSessionMock()
  mock.unmatchedRequestPolicy = .respond(with: .status(404))
  return AdminAPI(
    mock: mock, settings: AdminSettings(rootDirectory: root, onShutdown: {}), journalLimit: 100)
}

/// Collects what the API answers.
private final class Collector: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: written inside `answer`, on the fuzzing thread, and read there after.
  var status: Int?
  var body = Data()
  var ends = 0
  func receive(_ response: URLResponse) { status = (response as? HTTPURLResponse)?.statusCode }
  func receive(_ body: Data) { self.body.append(body) }
  func finish(_ end: ExchangeEnd) { ends += 1 }
}

/// The statuses the admin API answers with (500: a mapping that cannot be written, which no
/// mapping the API accepted should be).
private let documented: Set = [200, 201, 400, 404, 408, 422]

/// One input for libFuzzer: a path segment and a body, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let (first, rest) = data.split(once: UInt8(ascii: "\n"))
  let segment = String(decoding: first, as: UTF8.self)
  let body = rest ?? data
  let raw =
    URL(string: base + "/mappings/" + segment) != nil
    ? segment : segment.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""

  let admin = makeAdmin()
  prepare(admin, body)
  let routes: [(String, String)] = [
    ("POST", "/mappings"), ("PUT", "/mappings/\(knownID)"), ("PUT", "/mappings/\(raw)"),
    ("GET", "/mappings/\(raw)"), ("POST", "/mappings/import"),
    ("POST", "/mappings/remove-by-metadata"), ("GET", "/mappings"), ("GET", "/scenarios"),
    ("POST", "/requests/count"), ("POST", "/requests/find"), ("POST", "/near-misses/request"),
    ("GET", "/requests/\(raw)"), ("GET", "/requests?limit=\(raw)"),
    ("GET", "/requests?since=\(raw)"), ("GET", "/requests"), ("GET", "/requests/unmatched"),
    ("GET", "/requests/unmatched/near-misses"), ("PUT", "/scenarios/s/state"),
    ("PUT", "/scenarios/\(raw)/state"), ("POST", "/mappings/save"),
    ("DELETE", "/mappings/\(raw)"), ("POST", "/\(raw)"), ("GET", ""),
  ]
  for (method, path) in routes {
    guard let request = adminRequest(method, path, body) else { continue }
    let knownBefore = admin.mappings.mapping(knownUUID) != nil
    let sink = Collector()
    _ = admin.answer(request, to: sink)
    check(sink.ends == 1, "\(method) \(path) ended \(sink.ends) times")
    checkAnswer(sink.status, sink.body, "\(method) \(path)")
    let oneSegment = !raw.isEmpty && !raw.contains { "/?#".contains($0) }
    if method == "DELETE", knownBefore, oneSegment,
      raw.removingPercentEncoding?.lowercased() != knownID
    {
      // Ids are exact: `<id>%00zzz`, `<id>zzz` or `<id> ` name no mapping.
      check(admin.mappings.mapping(knownUUID) != nil, "DELETE \(path) removed \(knownID)")
    }
  }
  checkGuard(segment)
  if let request = adminRequest("POST", "/requests/wait", body) {
    switch admin.startWait(AdminCall(request)) {
    case .answer(let reply): checkAnswer(reply.status, reply.body, "POST /requests/wait")
    case .wait: break
    }
  }
  return 0
}

/// Sets the API up as every input finds it: the known mapping, a journal of two requests (one
/// matched, one not, each with the input's body), no saved files.
private func prepare(_ admin: AdminAPI, _ body: Data) {
  if let request = adminRequest("POST", "/mappings", Data(known.utf8)) {
    _ = admin.answer(request, to: Collector())
  }
  for (method, path) in [("POST", "/x"), ("GET", "/nope")] {
    if var request = adminRequest(method, path, body) {
      request.url = URL(string: "http://127.0.0.1:8080" + path)
      _ = send(request, to: admin.mock)
    }
  }
  if let files = try? FileManager.default.contentsOfDirectory(
    at: root.appendingPathComponent("mappings"), includingPropertiesForKeys: nil)
  {
    for file in files { try? FileManager.default.removeItem(at: file) }
  }
}

private func adminRequest(_ method: String, _ path: String, _ body: Data) -> URLRequest? {
  guard let url = URL(string: base + path) else { return nil }
  var request = URLRequest(url: url)
  request.httpMethod = method
  request.httpBody = body
  return request
}

/// An answer the API may give: a documented status and a JSON object; a 422 with WireMock's
/// error document, its pointer (if any) a JSON pointer.
private func checkAnswer(_ status: Int?, _ body: Data, _ route: String) {
  guard let status else { return check(false, "\(route) answered no status") }
  let text = String(decoding: body, as: UTF8.self)
  check(documented.contains(status), "\(route) answered \(status): \(text)")
  let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
  check(object != nil, "\(route) answered \(status) with a body that is not a JSON object: \(text)")
  guard status == 422 else { return }
  let error = (object?["errors"] as? [[String: Any]])?.first
  check(error?["code"] is Int, "\(route) 422 without a code: \(text)")
  if let pointer = (error?["source"] as? [String: Any])?["pointer"] {
    check((pointer as? String)?.hasPrefix("/") == true, "\(route) pointer \(pointer): \(text)")
  }
}

/// `AdminGuard` on the segment as a `Host`, an `Origin` and a `Sec-Fetch-Site`: it decides
/// without trapping, passes exactly the server's own names with its port, and refuses a
/// state-changing request from any origin but the server's own.
private func checkGuard(_ value: String) {
  guard let url = URL(string: "http://127.0.0.1:8080/__admin/mappings"),
    let guarding = AdminGuard(serverURL: url)
  else { return check(false, "no guard for \(base)") }
  let own: Set = ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"]
  for method in ["GET", "POST"] {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.setValue(value, forHTTPHeaderField: "Host")
    // Foundation may drop or change a value it cannot store; the guard reads what is stored.
    let host = request.value(forHTTPHeaderField: "Host")
    let passes = guarding.refusal(of: request) == nil
    check(
      passes == (host.map { own.contains($0.lowercased()) } ?? false),
      "Host \(value.debugDescription) \(passes ? "passed" : "was refused")")
    request.setValue("127.0.0.1:8080", forHTTPHeaderField: "Host")
    request.setValue(value, forHTTPHeaderField: "Origin")
    let origin = request.value(forHTTPHeaderField: "Origin")
    let ownOrigin =
      origin.map { given in own.contains { "http://\($0)" == given.lowercased() } }
      ?? true
    check(
      (guarding.refusal(of: request) == nil) == (method == "GET" || ownOrigin),
      "\(method) with Origin \(value.debugDescription)")
    request.setValue(nil, forHTTPHeaderField: "Origin")
    request.setValue(value, forHTTPHeaderField: "Sec-Fetch-Site")
    _ = guarding.refusal(of: request)
  }
}
