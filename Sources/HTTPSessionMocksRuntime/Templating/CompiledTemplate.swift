import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A template made only of text and plain reads of the request (`{{request.path}}`,
/// `{{request.query.q}}`, `{{request.headers.X-User}}`, `{{jsonPath request.body '$.name'}}`
/// with a path that names one place), compiled once into pieces that read the request
/// directly, without the request model or the renderer: what most templated mappings are.
///
/// It renders exactly what ``TemplateRenderer`` renders for the same template; where it
/// cannot be sure (the output is over the limit, the request's path or query is not ASCII, the
/// request's match budget is spent) it renders nothing, and the caller renders with the
/// renderer, which also reports the problem.
struct CompiledTemplate: Sendable {
  /// A part of the request a piece reads, as the request model holds it.
  enum Read: Sendable {
    /// `request.method`.
    case method
    /// `request.path`.
    case path
    /// `request.url`: the path and the query.
    case url
    /// `request.body`.
    case body
    /// `request.pathSegments.[index]`.
    case pathSegment(Int)
    /// `request.query.name`: its first value.
    case query(String)
    /// `request.headers.name` (any case; never `Host`, which the model makes): its value.
    case header(String)
    /// `jsonPath request.body 'path'`, a path that names one place; with its steps when the
    /// body may be scanned for it (see ``JSONBodyScan``).
    case jsonPath(JSONPath, scan: [JSONPath.DefiniteStep]?)
  }

  /// Text as written (UTF-8), or a read of the request (HTML-escaped for `{{ }}`).
  enum Piece: Sendable {
    case text([UInt8])
    case read(Read, escaped: Bool)
  }

  let pieces: [Piece]
  /// The text, when the template reads nothing (a header value without `{{`).
  let constant: String?
  /// Which parts of the request the pieces read, made once per rendering.
  private let readsPath: Bool
  private let readsQuery: Bool
  private let readsBody: Bool

  /// The compiled form of `nodes`, or `nil` when they hold anything else than text and the
  /// reads ``Read`` lists (blocks, other helpers, other paths, hash arguments).
  init?(_ nodes: [TemplateNode]) {
    // A template this long runs as the renderer runs it, whose steps are bounded.
    guard nodes.count <= 10_000 else { return nil }
    var pieces: [Piece] = []
    pieces.reserveCapacity(nodes.count)
    var readsPath = false
    var readsQuery = false
    var readsBody = false
    for node in nodes {
      switch node {
      case .text(let text):
        pieces.append(.text(Array(text.utf8)))
      case .output(let expression, let escaped, _, _):
        guard let read = Self.read(expression) else { return nil }
        switch read {
        case .method, .header: break
        case .path, .pathSegment: readsPath = true
        case .url: (readsPath, readsQuery) = (true, true)
        case .query: readsQuery = true
        case .body, .jsonPath: readsBody = true
        }
        pieces.append(.read(read, escaped: escaped))
      case .block:
        return nil
      }
    }
    self.pieces = pieces
    var constant: [UInt8]? = []
    for piece in pieces {
      guard case .text(let bytes) = piece else {
        constant = nil
        break
      }
      constant?.append(contentsOf: bytes)
    }
    self.constant = constant.map { String(decoding: $0, as: UTF8.self) }
    self.readsPath = readsPath
    self.readsQuery = readsQuery
    self.readsBody = readsBody
  }

  /// The read `expression` makes, if it is one of those ``Read`` lists.
  private static func read(_ expression: TemplateExpression) -> Read? {
    switch expression {
    case .path(let path):
      return read(path)
    case .call(let call):
      guard call.name.parents == 0, !call.name.isData, call.name.segments == ["jsonPath"],
        call.hash.isEmpty, call.params.count == 2,
        case .path(let document) = call.params[0], case .body? = read(document),
        case .literal(.string(let expression)) = call.params[1],
        !TemplateRenderer.isIndefinite(expression),
        let path = try? JSONPath(parsing: expression), path.isDefinite
      else { return nil }
      let steps = path.definiteSteps
      return .jsonPath(path, scan: steps.flatMap { JSONBodyScan.canScan($0) ? $0 : nil })
    case .literal:
      return nil
    }
  }

  /// The read a path of the request model makes: `request.` and one member (or a member and
  /// one name or index).
  private static func read(_ path: TemplatePath) -> Read? {
    guard path.parents == 0, !path.isData, path.segments.first == "request" else { return nil }
    let segments = path.segments
    switch segments.count {
    case 2:
      switch segments[1] {
      case "method": return .method
      case "path": return .path
      case "url": return .url
      case "body": return .body
      default: return nil
      }
    case 3:
      switch segments[1] {
      case "pathSegments":
        return Int(segments[2]).map { .pathSegment($0) }
      case "query":
        return .query(segments[2])
      case "headers":
        // The model adds `Host` when the request has none: leave that to the renderer.
        let name = segments[2]
        guard name.utf8.allSatisfy({ $0 < 0x80 }), name.lowercased() != "host" else {
          return nil
        }
        return .header(name)
      default:
        return nil
      }
    default:
      return nil
    }
  }

  /// The template rendered for `request`, as UTF-8, or `nil` when the renderer must render
  /// it (see ``CompiledTemplate``). `sent` is what routing read of the request's URL, when it
  /// did: the same URL, not read again.
  func render(for request: URLRequest, sent: RequestFacts? = nil, maxOutputBytes: Int) -> [UInt8]? {
    var path = ""
    var query: String?
    if readsPath || readsQuery {
      let url = sent?.url ?? request.url
      if readsPath {
        path = sent?.pathAsGiven ?? url?.path(percentEncoded: true) ?? ""
        if path.isEmpty { path = "/" }
      }
      if readsQuery { query = url?.query(percentEncoded: true) }
    }
    var facts = Facts(
      request: request, path: path, query: query, body: readsBody ? request.httpBody : nil)
    var out: [UInt8] = []
    out.reserveCapacity(pieces.count * 16)
    for piece in pieces {
      switch piece {
      case .text(let bytes):
        out.append(contentsOf: bytes)
      case .read(let read, let escaped):
        guard var value = facts.text(of: read) else { return nil }
        value.withUTF8 { bytes in
          if escaped {
            Self.escape(bytes, into: &out)
          } else {
            out.append(contentsOf: bytes)
          }
        }
      }
      guard out.count <= maxOutputBytes else { return nil }
    }
    return out
  }

  /// `text` escaped as ``TemplateRenderer/escape(_:)`` escapes it, added to `out`.
  private static func escape(_ text: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
    var start = 0
    for index in text.indices {
      let replacement: StaticString
      switch text[index] {
      case UInt8(ascii: "&"): replacement = "&amp;"
      case UInt8(ascii: "<"): replacement = "&lt;"
      case UInt8(ascii: ">"): replacement = "&gt;"
      case UInt8(ascii: "\""): replacement = "&quot;"
      case UInt8(ascii: "'"): replacement = "&#x27;"
      case UInt8(ascii: "`"): replacement = "&#x60;"
      case UInt8(ascii: "="): replacement = "&#x3D;"
      default: continue
      }
      out.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<index]))
      replacement.withUTF8Buffer { out.append(contentsOf: $0) }
      start = index + 1
    }
    out.append(contentsOf: UnsafeBufferPointer(rebasing: text[start...]))
  }

  /// The parts of one request the pieces read.
  private struct Facts {
    let request: URLRequest
    /// The path as the model has it (`/` when empty), when a piece reads it.
    let path: String
    /// The query as written, or `nil` when the URL has none (or no piece reads it).
    let query: String?
    /// The body's bytes, when a piece reads them.
    let data: Data?
    /// The body as text, made when a piece first reads it.
    private var bodyText: String?
    /// The body parsed for `jsonPath`, once: `.some(nil)` when that gives nothing.
    private var document: JSONNode??

    init(request: URLRequest, path: String, query: String?, body: Data?) {
      self.request = request
      self.path = path
      self.query = query
      self.data = body
    }

    /// The body as the model reads it: its bytes as UTF-8, repaired.
    private mutating func body() -> String {
      if let bodyText { return bodyText }
      let text = String(decoding: data ?? Data(), as: UTF8.self)
      bodyText = text
      return text
    }

    /// The text `read` gives, as the renderer writes it; `nil` when the renderer must say.
    mutating func text(of read: Read) -> String? {
      switch read {
      case .method:
        guard let method = request.httpMethod else { return "GET" }
        if method.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) { return method }
        return method.uppercased()
      case .path:
        return path
      case .url:
        return query.map { path + "?" + $0 } ?? path
      case .body:
        return body()
      case .pathSegment(let index):
        var path = path
        return path.withUTF8 { bytes -> String? in
          guard let found = Self.part(index, of: bytes, at: UInt8(ascii: "/")) else { return nil }
          guard let range = found else { return "" }
          let segment = UnsafeBufferPointer(rebasing: bytes[range])
          let text = String(decoding: segment, as: UTF8.self)
          guard segment.contains(UInt8(ascii: "%")) else { return text }
          return text.removingPercentEncoding ?? text
        }
      case .query(let name):
        var query = query ?? ""
        return query.withUTF8 { Self.queryValue(named: name, in: $0) }
      case .header(let name):
        let given = request.allHTTPHeaderFields ?? [:]
        if let value = given[name] { return value }
        // As the model finds it: the first name in sorted order that matches in any case.
        let found = given.filter { $0.key.caseInsensitiveCompare(name) == .orderedSame }
          .min { $0.key < $1.key }
        return found?.value ?? ""
      case .jsonPath(let path, let steps):
        if let budget = MatchBudget.current,
          budget.isSpent || budget.isPastDeadline || budget.limits.maxJSONPathValues < 1
        {
          return nil
        }
        let data = data ?? Data()
        // The bytes as they are, when the model's text holds the same bytes: ASCII, which
        // decoding cannot repair.
        let scanned: String?? = data.withUnsafeBytes { raw in
          let bytes = raw.bindMemory(to: UInt8.self)
          guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
          // An empty body, or JSON's null, fails the request: the renderer says why.
          guard !Self.isBlankOrNull(bytes) else { return .some(nil) }
          guard let steps else { return nil }
          switch JSONBodyScan.scan(bytes, for: steps) {
          case .nothing: return .some("")
          case .scalar(let range): return .some(Self.scalarText(bytes[range]))
          case .unsure: return nil
          }
        }
        if let scanned { return scanned }
        var text = body()
        guard !text.withUTF8(Self.isBlankOrNull) else { return nil }
        if document == nil { document = .some(parsedBody()) }
        // Not JSON: the renderer's fallback, nothing.
        guard case .some(.some(let node)) = document else { return "" }
        guard let selected = path.selectDefinite(in: node) else { return "" }
        switch selected {
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .string(let text): return text
        default:
          return TemplateRenderer.jsonValue(selected).map { TemplateValue(json: $0).text } ?? ""
        }
      }
    }

    /// The bytes of part `index` of the ASCII `text` split at `separator`, empty parts left
    /// out (`.some(nil)` past the last part), as the model splits it; `nil` when `text` is not
    /// ASCII (the model splits that by characters).
    private static func part(
      _ index: Int, of text: UnsafeBufferPointer<UInt8>, at separator: UInt8
    ) -> Range<Int>?? {
      guard text.allSatisfy({ $0 < 0x80 }) else { return nil }
      var seen = 0
      var start = 0
      for position in 0...text.count where position == text.count || text[position] == separator {
        if start != position {
          if seen == index { return .some(start..<position) }
          seen += 1
        }
        start = position + 1
      }
      return .some(nil)
    }

    /// The first value of the query parameter `name` in `query`, as the model gives it: the
    /// pairs split at `&`, empty ones left out, the first `=` ending the name, both decoded
    /// (`%XX` and `+`); `""` when there is none; `nil` when the query is not ASCII.
    private static func queryValue(named name: String, in query: UnsafeBufferPointer<UInt8>)
      -> String?
    {
      guard query.allSatisfy({ $0 < 0x80 }) else { return nil }
      // An ASCII name equals a plain key exactly when their bytes do; any other name is
      // compared as text, as the model compares it.
      let asciiName = name.utf8.allSatisfy { $0 < 0x80 }
      var start = 0
      // One pass over the pairs.
      for position in 0...query.count
      where position == query.count || query[position] == UInt8(ascii: "&") {
        defer { start = position + 1 }
        guard start != position else { continue }
        let pair = UnsafeBufferPointer(rebasing: query[start..<position])
        let equals = pair.firstIndex(of: UInt8(ascii: "="))
        let key = UnsafeBufferPointer(rebasing: pair[..<(equals ?? pair.endIndex)])
        if asciiName && !isEncoded(key) {
          guard key.elementsEqual(name.utf8) else { continue }
        } else {
          guard decoded(key) == name else { continue }
        }
        guard let equals else { return "" }
        return decoded(UnsafeBufferPointer(rebasing: pair[(equals + 1)...]))
      }
      return ""
    }

    /// Whether query text holds a `%` or a `+`, which decoding changes.
    private static func isEncoded(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
      text.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
    }

    /// A query component decoded as the model decodes it (`%XX` and `+`).
    private static func decoded(_ text: UnsafeBufferPointer<UInt8>) -> String {
      let string = String(decoding: text, as: UTF8.self)
      return isEncoded(text) ? TemplateRenderer.formDecode(string) : string
    }

    /// The text of a scalar a scan found (see ``JSONBodyScan``), as the renderer writes the
    /// value; `nil` when the renderer must say.
    private static func scalarText(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
      switch bytes.first {
      case UInt8(ascii: "\""):
        return String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
      case UInt8(ascii: "t"): return "true"
      case UInt8(ascii: "f"): return "false"
      case UInt8(ascii: "n"): return ""
      default:
        return JSONNumber.value(String(decoding: bytes, as: UTF8.self))
          .map { TemplateValue(json: $0).text }
      }
    }

    /// Whether `text` is empty, white space, or JSON's `null` with white space around it: a
    /// body `jsonPath` fails the request on.
    private static func isBlankOrNull(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
      guard let first = text.first(where: { !JSONShape.isSpace($0) }) else { return true }
      guard first == UInt8(ascii: "n") else { return false }
      return text.split(whereSeparator: JSONShape.isSpace).elementsEqual(["null".utf8[...]]) {
        $0.elementsEqual($1)
      }
    }

    /// The body as the renderer parses it for `jsonPath`, or `nil` when that gives nothing.
    private mutating func parsedBody() -> JSONNode? {
      var text = body()
      // UTF-16 or UTF-32 (zero bytes at the start): as the renderer reads it.
      if text.utf8.prefix(4).contains(0) {
        let data = Data(text.utf8)
        let node = (try? JSONCursor.parse(data, source: "body", duplicates: .lastWins))?.node
        return node.flatMap { Self.isReadable($0) ? $0 : nil }
      }
      let node = text.withUTF8 { bytes -> JSONNode? in
        var parser = JSONParser(bytes)
        return try? parser.document()
      }
      return node.flatMap { Self.isReadable($0) ? $0 : nil }
    }

    /// Whether ``TemplateRenderer/jsonValue(_:)`` reads `node`: no unreadable string and no
    /// number beyond a `Double`, in the values it reads (the last of a repeated key).
    static func isReadable(_ node: JSONNode) -> Bool {
      switch node {
      case .null, .bool, .string: return true
      case .number(let literal): return JSONNumber.value(literal) != nil
      case .unreadable: return false
      case .array(let nodes): return nodes.allSatisfy(isReadable)
      case .object(let members):
        // Few members: look for a later one of the same key; many: remember the keys seen.
        if members.count <= 8 {
          for (index, member) in members.enumerated()
          where !members[(index + 1)...].contains(where: { $0.key == member.key }) {
            guard isReadable(member.value) else { return false }
          }
          return true
        }
        var seen = Set<String>(minimumCapacity: members.count)
        for member in members.reversed() where seen.insert(member.key).inserted {
          guard isReadable(member.value) else { return false }
        }
        return true
      }
    }
  }
}
