import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The HAR reader and writer, and redaction, on arbitrary documents.
//
// Input: the bytes of a HAR file. Checked besides: an error names the file and either a path
// or a line and column; a recorded JSON body matches whatever its key order; a document that
// JSONSerialization reads is never a syntax error here.

/// One input for libFuzzer: a HAR document.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let entries: [HARFormat.Entry]
  do {
    entries = try HARFormat.document(data, source: "fuzz.har").entries
  } catch {
    checkError(error, data)
    return 0
  }
  let bundle = HARFormat.bundle(from: entries, name: "fuzz.har")
  check(
    bundle.entries.map(\.responses.count).reduce(0, +) == entries.count,
    "\(entries.count) entries became \(bundle.entries.map(\.responses.count)) responses")
  let mock = replayingMock(bundle)
  for entry in entries {
    checkRedaction(entry)
    checkAnswered(entry, by: mock)
  }
  checkReorderedJSONBodies(bundle)
  checkRoundTrip(entries, bundle)
  return 0
}

/// A reader's error names the file and either a path or the line and column of the text that
/// is not JSON, with a reason; text that Foundation's JSONSerialization reads is not a syntax
/// error (the reader accepts all it accepts, and more: numbers it cannot represent, strings
/// that are not text, where nothing reads them).
func checkError(_ error: MockBundleError, _ data: Data) {
  check(error.source == "fuzz.har", "an error without its file: \(error)")
  check(!error.problem.isEmpty, "an error without a reason")
  check((error.line == nil) == (error.column == nil), "a line without a column: \(error)")
  if let line = error.line, let column = error.column {
    check(line >= 1 && column >= 1, "a place before the start: \(error)")
    check(
      error.description.hasPrefix("fuzz.har:\(line):\(column): "),
      "the place is not shown: \(error)")
  } else {
    check(error.description.hasPrefix("fuzz.har: "), "an error without its file: \(error)")
  }
  if error.path.isEmpty, error.problem.hasPrefix("not valid JSON"),
    (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
  {
    check(false, "JSONSerialization reads what the reader calls not JSON: \(error)")
  }
}

/// A recorded JSON body matches the same value written with other key order and spacing:
/// each entry's stub answers the body as compact JSON with sorted keys.
func checkReorderedJSONBodies(_ bundle: MockBundle) {
  let mock = replayingMock(bundle)
  for entry in bundle.entries {
    guard let parts = entry.matcher.exactParts, parts.mimeType == "application/json",
      let body = parts.body, let value = try? JSONValue(parsing: body)
    else { continue }
    var request = URLRequest(url: parts.url)
    request.httpMethod = parts.method
    request.httpBody = Data(" ".utf8) + JSONWriter.pretty(value)
    let before = mock.exchanges.count
    _ = send(request, to: mock)
    let exchange = mock.exchanges.dropFirst(before).first
    check(exchange?.answeredBy != nil, "\(entry.matcher) did not answer its body reformatted")
  }
}

/// A mock with the bundle's stubs, as `load` adds them.
func replayingMock(_ bundle: MockBundle) -> URLSessionMock {
  let mock = URLSessionMock()
  for entry in bundle.entries {
    check(entry.matcher.exactParts != nil, "\(entry.matcher) is not an exact matcher")
    check(entry.matcher.problems.isEmpty, "\(entry.matcher) has problems \(entry.matcher.problems)")
    mock.stub(entry.matcher, with: entry.responses)
  }
  return mock
}

func isRedirect(_ entry: HARFormat.Entry) -> Bool {
  [301, 302, 303, 307, 308].contains(entry.response.status)
}

func request(of entry: HARFormat.Entry) -> URLRequest {
  var request = URLRequest(url: entry.request.url)
  request.httpMethod = entry.request.method
  request.httpBody = entry.request.body
  return request
}

/// Every recorded request is answered by some entry's stub: with an HTTP response, or with the
/// error a status-0 entry replays.
///
/// Each entry is sent in turn, redirects too, so that identical requests get their recorded
/// answers in order. What is checked is the request's own exchange, the first one it records:
/// a redirect is followed, as URLSession follows it, and its target may not be recorded (so
/// the end of the chain can be unmatched), and which answer a target gets depends on how often
/// redirects led to it before.
func checkAnswered(_ entry: HARFormat.Entry, by mock: URLSessionMock) {
  let before = mock.exchanges.count
  _ = send(request(of: entry), to: mock)
  let exchanges = mock.exchanges
  let what = "\(entry.request.method) \(entry.request.url)"
  guard exchanges.count > before else {
    return check(false, "\(what) recorded no exchange")
  }
  let exchange = exchanges[before]
  check(exchange.request.url == entry.request.url, "\(what) recorded \(exchange) first")
  check(exchange.answeredBy != nil, "\(what) was not replayed: \(exchange)")
  if let error = exchange.error {
    check(
      (error as? URLError)?.code == .networkConnectionLost,
      "\(what) was not replayed: \(error)")
  } else {
    check(exchange.statusCode != nil, "\(what) was answered without an HTTP response")
  }
}

/// Redacting twice changes nothing more than redacting once, and leaves no secret value.
func checkRedaction(_ entry: HARFormat.Entry) {
  let sent = request(of: entry)
  let once = Redaction.default.redact(sent)
  let twice = Redaction.default.redact(once)
  check(once.url == twice.url, "redacting \(sent.url?.absoluteString ?? "") is not idempotent")
  check(
    once.httpBody == twice.httpBody, "redacting the body of \(entry.request.url) is not idempotent")
  let headers = Redaction.default.redact(headers: ["Authorization": "secret", "X-Other": "kept"])
  check(headers == ["Authorization": "REDACTED", "X-Other": "kept"], "headers: \(headers)")
}

/// A bundle without failed entries writes as HAR and reads back to the same answers.
func checkRoundTrip(_ entries: [HARFormat.Entry], _ bundle: MockBundle) {
  let written: Data
  do {
    written = try HARFormat.write(bundle)
  } catch {
    check(
      entries.contains { $0.response.status == 0 },
      "a bundle read from HAR could not be written: \(error)")
    return
  }
  let reread: [HARFormat.Entry]
  do {
    reread = try HARFormat.document(written, source: "written.har").entries
  } catch {
    check(false, "written HAR does not read back: \(error)")
    return
  }
  check(reread.count == entries.count, "\(entries.count) entries wrote as \(reread.count)")
  let again = HARFormat.bundle(from: reread, name: "written.har")
  check(
    again.entries.map(\.responses.count) == bundle.entries.map(\.responses.count),
    "the response sequences changed in a round trip")
  let original = replayingMock(bundle)
  let copy = replayingMock(again)
  for entry in entries where !isRedirect(entry) {
    let a = send(request(of: entry), to: original)
    let b = send(request(of: entry), to: copy)
    check(
      a.status == b.status && a.body == b.body,
      "\(entry.request.url) answered \(a.status ?? -1) then \(b.status ?? -1) after a round trip")
  }
}
