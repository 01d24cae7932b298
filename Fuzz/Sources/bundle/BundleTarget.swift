import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The bundle readers: our bundle.json (version 1), MockingBird's Mock-Bundle format and
// WireMock's mappings, from arbitrary bytes.
//
// Input: one document. Both readers get it, with a folder that holds two body files (so that
// `file` references resolve, and escaping ones are refused). Checked: no crash and no partial
// result (a reader returns a bundle or throws a MockBundleError with a path); a bundle read
// from our format writes back, inline and as a folder's document, to one that reads as an equal
// bundle and writes the same bytes again; a MockingBird bundle does too, through our format;
// every loaded bundle routes a request through a mock; the cheap top-level sniffing that picks
// the reader agrees with the parser; an error names either a path or the line and column of
// the text that is not JSON.

/// A folder with the body files the inputs may name, made once per process.
let fixtureFolder: URL = {
  let folder = FileManager.default.temporaryDirectory
    .appendingPathComponent("fuzz-bundle-\(ProcessInfo.processInfo.processIdentifier)")
  try? FileManager.default.createDirectory(
    at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
  try? Data(#"{"origin":"127.0.0.1"}"#.utf8).write(to: folder.appendingPathComponent("ip.json"))
  try? Data([0, 1, 2, 0xFF]).write(to: folder.appendingPathComponent("sub/b.bin"))
  return folder
}()

/// One input for libFuzzer: a document, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  checkSniffing(data)
  if let bundle = read({
    try BundleFormat.read(data, folder: fixtureFolder, source: "in", name: "in")
  }) {
    checkRoundTrip(bundle, "our format")
    route(bundle)
  }
  if let bundle = read({
    try MockingBirdFormat.read(data, folder: fixtureFolder, source: "in", name: "in")
  }) {
    check(bundle.firstMatchWins, "a MockingBird bundle must keep the first-match rule")
    checkRoundTrip(bundle, "MockingBird's format")
    route(bundle)
  }
  checkWireMock(data)
  return 0
}

/// WireMock's format: the document as one mapping or a `{"mappings": [...]}` list, with the
/// fixture folder as `__files`. A mapping reads or throws a well-formed error; what it read
/// writes back as WireMock JSON that reads again and then writes the same bytes; it routes
/// through a mock; its metadata can be matched; a request pattern reads or throws likewise.
func checkWireMock(_ data: Data) {
  let files = BundleFiles(folder: fixtureFolder, source: "in")
  var mappings: [WireMockMapping] = []
  do {
    mappings = try WireMockFormat.mappings(in: data, source: "in", name: "in", files: files)
  } catch {
    _ = read({ throw error })
  }
  for mapping in mappings {
    var first = WireMockFormat.Writer(intoFolder: false)
    guard let written = try? first.mapping(mapping, index: 0) else {
      // Only what code builds is unstorable, and a scenario chain needs a bundle; a mapping read
      // from a file is neither.
      check(false, "a mapping read from a file cannot be written back")
      continue
    }
    let bytes = JSONWriter.pretty(written)
    guard
      let again = read({
        MockBundle(
          entries: try WireMockFormat.mappings(
            in: bytes, source: "in", name: "in", files: files
          ).map(\.entry), firstMatchWins: false)
      }), let entry = again.entries.first, again.count == 1
    else {
      check(
        false, "a written mapping does not read back: \(String(decoding: bytes, as: UTF8.self))")
      continue
    }
    var second = WireMockFormat.Writer(intoFolder: false)
    let rewritten = try? second.mapping(
      WireMockMapping(id: mapping.id, name: mapping.name, entry: entry, metadata: mapping.metadata),
      index: 0)
    check(rewritten.map(JSONWriter.pretty) == bytes, "writing a mapping again gives other bytes")
    _ = try? mapping.metadataMatches(
      pattern: Data(#"{"matchesJsonPath": "$.a"}"#.utf8), source: "in")
  }
  route(MockBundle(entries: mappings.map(\.entry), firstMatchWins: false))
  do {
    let matcher = try RequestMatcher.wireMockPattern(json: data, source: "in")
    _ = matcher.matches(makeRequest("http://a.test/x?y=1"))
    _ = matcher.description
  } catch let error as MockBundleError {
    _ = read({ throw error })
  } catch {
    check(false, "wireMockPattern threw something other than a MockBundleError: \(error)")
  }
}

/// The bundle `body` reads, or `nil` when it throws; a throw must be a well-formed
/// `MockBundleError`.
func read(_ body: () throws -> MockBundle) -> MockBundle? {
  do {
    return try body()
  } catch let error as MockBundleError {
    check(!error.problem.isEmpty, "an error with no problem: \(error)")
    check(error.source == "in", "an error naming another source: \(error)")
    check(!error.description.isEmpty, "an empty description")
    check((error.line == nil) == (error.column == nil), "a line without a column: \(error)")
    if let line = error.line, let column = error.column {
      check(line >= 1 && column >= 1, "a place before the start: \(error)")
      check(error.description.hasPrefix("in:\(line):\(column): "), "the place is not shown")
    }
    check(error.localizedDescription == error.description, "localizedDescription differs")
    if !error.path.isEmpty {
      check(
        !error.path.hasPrefix(".") && !error.path.hasSuffix("."),
        "a malformed JSON path: \(error.path)")
    }
    return nil
  } catch {
    check(false, "a reader threw something other than a MockBundleError: \(error)")
    return nil
  }
}

/// Writing a bundle and reading it back gives an equal bundle, and writing that gives the same
/// bytes; in a folder's form too, with its body files.
func checkRoundTrip(_ bundle: MockBundle, _ format: String) {
  var inline = BundleFormat.Writer(intoFolder: false)
  let document: JSONValue
  do {
    document = try inline.document(bundle)
  } catch {
    // Only what code can build is unstorable; a file never yields it.
    check(false, "a bundle read from \(format) cannot be written: \(error)")
    return
  }
  let bytes = JSONWriter.pretty(document)
  guard let reread = read({ try BundleFormat.read(bytes, folder: nil, source: "in", name: "in") })
  else {
    check(false, "what \(format) gave writes a document that does not read back")
    return
  }
  check(reread == bundle, "a bundle from \(format) is not equal after a round trip")
  var again = BundleFormat.Writer(intoFolder: false)
  let second = try? again.document(reread)
  check(second.map(JSONWriter.pretty) == bytes, "writing again gives other bytes")

  var folder = BundleFormat.Writer(intoFolder: true)
  let folderDocument = try? folder.document(bundle)
  check(folderDocument != nil, "the folder form cannot be written")
  for path in folder.files.keys {
    check(BundleFiles.isContained(path), "a body file written outside the folder: \(path)")
  }
}

/// A loaded bundle answers a request (or reports that nothing matches) without crashing.
///
/// Only a bundle whose every answer is immediate is routed: answers on the clock (delays,
/// dribbles) do not arrive inside `resume()`, where `send` reads them, and a mock without a
/// clock would wait for them in real time. This holds for every format (an entry of ours with a
/// dribble and no `url` matches the probe requests too).
func route(_ bundle: MockBundle) {
  let immediate = bundle.entries.allSatisfy { entry in
    entry.responses.allSatisfy { $0.isImmediate && $0.dribble == nil }
  }
  guard immediate else { return }
  let mock = URLSessionMock()
  mock.unmatchedRequestPolicy = .respond(with: .status(404))
  let stubs = mock.load(bundle)
  check(stubs.count == bundle.entries.count, "load returned \(stubs.count) handles")
  for url in ["https://httpbin.org/ip", "http://a.test/x?y=1"] {
    let answer = send(makeRequest(url), to: mock)
    check(answer.status != nil || answer.error != nil, "no answer for \(url)")
  }
  mock.use(bundle)
  mock.use(nil)
}

/// The top-level sniffing agrees with the parser on what the document is (both see a UTF-16 or
/// UTF-32 document as its UTF-8 text, as `MockBundle(contentsOf:)` does).
func checkSniffing(_ data: Data) {
  let text = JSONText.utf8(data)
  let shape = JSONShape(sniffing: text)
  guard (try? JSONCursor.parse(data, source: "in", duplicates: .lastWins)) != nil,
    let parsed = try? JSONValue(parsing: text)
  else { return }
  switch parsed {
  case .array: check(shape == .array, "an array sniffed as \(shape)")
  case .object(let members):
    guard case .object(let keys) = shape else {
      check(false, "an object sniffed as \(shape)")
      return
    }
    // Keys with escapes are compared as written by the sniffer; only plain ones must agree.
    let plain = Set(members.keys.filter { !$0.contains("\\") && !$0.contains("\"") })
    let sniffed = keys.filter { !$0.contains("\\") }
    check(
      plain.isSubset(of: sniffed) || String(decoding: text, as: UTF8.self).contains("\\"),
      "sniffed keys \(keys.sorted()) miss some of \(members.keys.sorted())")
  default: break
  }
}
