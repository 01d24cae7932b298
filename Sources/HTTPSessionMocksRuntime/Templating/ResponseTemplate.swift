import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The templated parts of a ``StubResponse`` (see ``StubResponse/templated(seed:)``), parsed
/// once: the body, the header values and the body file's name, rendered for each request with
/// the request model, the mock's clock and a random source seeded by `seed`.
final class ResponseTemplate: Sendable {
  /// A parsed template, or where it does not parse.
  typealias Parsed = Result<[TemplateNode], TemplateSyntaxError>

  /// Where a templated body file is read from.
  enum FileSource: @unchecked Sendable {
    // @unchecked Sendable: `Bundle` is only read (for a resource's URL).
    case folder(URL?)
    case bundle(Bundle)
  }

  let body: Parsed?
  let headers: [(name: String, template: Parsed)]
  let fileName: (template: Parsed, source: FileSource)?
  let seed: UInt64
  /// WireMock's `transformerParameters`, read as `parameters`.
  let parameters: TemplateValue
  /// The template sources, for comparing responses and writing them back.
  let sources: [String]
  /// The members of `request` the templates read (`nil`: all of them, when one reads the
  /// whole model or a body file is a template too).
  let fields: Set<String>?
  /// `fields` as the request model reads it.
  let members: TemplateRequestModel.Members
  /// Parsed JSONPath expressions, shared by the renderings.
  let paths = JSONPathCache()
  /// The body and header templates compiled to read the request directly, where they can be
  /// (see ``CompiledTemplate``); the headers' in the order of `headers`, `nil` when one of them
  /// cannot be.
  let compiledBody: CompiledTemplate?
  let compiledHeaders: [CompiledTemplate]?
  /// The response last made, reused while the URL, status and headers stay the same
  /// (`HTTPURLResponse` is immutable, and costly to make): the headers rendered (`base`), the
  /// body's length, and the headers made of them (`fields`).
  let lastResponse = Locked<
    (
      url: URL, status: Int, base: [String: String], length: Int, fields: [String: String],
      response: URLResponse?
    )?
  >(nil)
  /// The body last rendered, handed out again while renderings give the same bytes, and the
  /// answer last made of it: a test's requests most often render the same body, and each
  /// answer stays in the journal, so a copy of each would fill memory as an untemplated stub's
  /// one shared answer does not.
  private let lastBody = Locked<Data?>(nil)
  let lastAnswer = Locked<Answer?>(nil)
  /// How many answers were rendered: each draws its random values from the seed and this
  /// count, so that a replayed test gets the same values in the same order.
  private let renders = Locked<UInt64>(0)

  init(
    body: String?, headers: [String: String], fileName: String?, source: FileSource, seed: UInt64,
    parameters: JSONValue? = nil
  ) {
    self.parameters = parameters.map(TemplateValue.init(json:)) ?? .null
    self.body = body.map(Self.parse)
    self.headers = headers.sorted { $0.key < $1.key }.map { ($0.key, Self.parse($0.value)) }
    self.fileName = fileName.map { (Self.parse($0), source) }
    self.seed = seed
    var fields: Set<String>? = []
    var parts: [Parsed] = self.headers.map(\.template)
    if let body = self.body { parts.append(body) }
    if let name = self.fileName?.template { parts.append(name) }
    for case .success(let nodes) in parts { Self.collect(nodes, into: &fields) }
    // A body file, or a stored body, is parsed per request: its references are unknown.
    if fileName != nil || body == nil { fields = nil }
    self.fields = fields
    members = TemplateRequestModel.Members(fields)
    if case .success(let nodes)? = self.body {
      compiledBody = CompiledTemplate(nodes)
    } else {
      compiledBody = nil
    }
    var compiledHeaders: [CompiledTemplate]? = []
    for header in self.headers {
      guard case .success(let nodes) = header.template, let compiled = CompiledTemplate(nodes)
      else {
        compiledHeaders = nil
        break
      }
      compiledHeaders?.append(compiled)
    }
    self.compiledHeaders = compiledHeaders
    sources =
      [body ?? "", fileName ?? ""]
      + headers.sorted { $0.key < $1.key }.map { $0.key + ":" + $0.value }
  }

  /// Adds the members of `request` that `nodes` read to `fields`; `nil` when a path reads the
  /// whole model (`this`, `request`, `../`, or a data variable).
  private static func collect(_ nodes: [TemplateNode], into fields: inout Set<String>?) {
    func path(_ path: TemplatePath) {
      if path.isData { return }
      guard let first = path.segments.first else {
        fields = nil
        return
      }
      guard first == "request" else { return }
      guard path.segments.count > 1 else {
        fields = nil
        return
      }
      fields?.insert(path.segments[1])
    }
    func expression(_ expression: TemplateExpression) {
      switch expression {
      case .path(let value): path(value)
      case .literal: break
      case .call(let call): calling(call)
      }
    }
    func calling(_ call: TemplateCall) {
      call.params.forEach(expression)
      for pair in call.hash { expression(pair.value) }
    }
    for node in nodes {
      guard fields != nil else { return }
      switch node {
      case .text: break
      case .output(let value, _, _, _): expression(value)
      case .block(let block):
        // Inside a block, `this` may be anything: only the root context is the model.
        if block.call.name.source != "if" && block.call.name.source != "unless"
          && block.call.name.source != "each" && block.call.name.source != "assign"
          && !TemplateRenderer.helperNames.contains(block.call.name.source)
        {
          fields = nil
          return
        }
        calling(block.call)
        collect(block.body, into: &fields)
        collect(block.inverse, into: &fields)
      }
    }
  }

  static func parse(_ text: String) -> Parsed {
    do {
      return .success(try TemplateParser.parse(text))
    } catch {
      return .failure(error)
    }
  }

  /// Why the template cannot answer (the first part that does not parse), or `nil`.
  var problem: String? {
    if case .failure(let error)? = body { return "the body template does not parse at \(error)" }
    for header in headers {
      if case .failure(let error) = header.template {
        return "the template of header \(header.name) does not parse at \(error)"
      }
    }
    if case .failure(let error)? = fileName?.template {
      return "the body file name template does not parse at \(error)"
    }
    return nil
  }

  /// What a rendering gives: the body (or `nil` to keep the stub's), the headers, and a body
  /// file that is missing (WireMock answers 500 then).
  struct Rendered {
    var body: Data?
    var headers: [String: String]
    var missingFile: String?
  }

  func render(
    for request: URLRequest, sent: RequestFacts? = nil, headers given: [String: String],
    body stored: Data?, now: Date, maxOutputBytes: Int = TemplateRenderer.defaultMaxOutputBytes
  ) -> Result<Rendered, TemplateRenderError> {
    // Every part compiled: read the request directly (such templates draw no random values).
    if fileName == nil, let compiledBody, let compiledHeaders,
      let rendered = renderCompiled(
        compiledBody, compiledHeaders, for: request, sent: sent, headers: given,
        maxOutputBytes: maxOutputBytes)
    {
      return .success(rendered)
    }
    if let problem { return .failure(TemplateRenderError(message: problem)) }
    let count = renders.withLock { value -> UInt64 in
      value += 1
      return value
    }
    var environment = TemplateEnvironment(
      now: now, random: SeededRandom(seed: seed &+ count &* SeededRandom.step),
      maxOutputBytes: maxOutputBytes, paths: paths)
    // The request model, made when a template first needs it.
    var model: TemplateValue?
    func context() -> TemplateValue {
      if let model { return model }
      var context = TemplateRequestModel.context(for: request, members: members)
      if case .object(var members, let json, let insensitive) = context, case .object = parameters {
        members.append(("parameters", parameters))
        context = .object(members, json: json, caseInsensitive: insensitive)
      }
      model = context
      return context
    }
    func run(_ parsed: Parsed, _ what: String) -> Result<String, TemplateRenderError> {
      guard case .success(let nodes) = parsed else {
        return .failure(TemplateRenderError(message: problem ?? "a template does not parse"))
      }
      let context = context()
      do {
        return .success(
          try TemplateRenderer.render(nodes, context: context, environment: &environment))
      } catch {
        return .failure(TemplateRenderError(message: "\(what): \(error.message)"))
      }
    }
    var rendered = Rendered(body: nil, headers: given, missingFile: nil)
    for header in headers {
      switch run(header.template, "the template of header \(header.name)") {
      case .success(let value): rendered.headers[header.name] = value
      case .failure(let error): return .failure(error)
      }
    }
    var bodyText: String?
    var bodyWhat = "the body template"
    if let fileName {
      let name: String
      switch run(fileName.template, "the body file name template") {
      case .success(let value): name = value
      case .failure(let error): return .failure(error)
      }
      guard let data = Self.read(name, from: fileName.source) else {
        rendered.missingFile = name
        return .success(rendered)
      }
      bodyText = String(decoding: data, as: UTF8.self)
      bodyWhat = "the template in the body file \(name)"
    }
    if let text = bodyText {
      switch run(Self.parse(text), bodyWhat) {
      case .success(let value): rendered.body = sharedBody(value)
      case .failure(let error): return .failure(error)
      }
    } else if let bytes = compiledBody?.render(
      for: request, sent: sent, maxOutputBytes: maxOutputBytes)
    {
      rendered.body = sharedBody(bytes)
    } else if let body {
      switch run(body, bodyWhat) {
      case .success(let value): rendered.body = sharedBody(value)
      case .failure(let error): return .failure(error)
      }
    } else if let stored {
      switch run(Self.parse(String(decoding: stored, as: UTF8.self)), bodyWhat) {
      case .success(let value): rendered.body = sharedBody(value)
      case .failure(let error): return .failure(error)
      }
    }
    return .success(rendered)
  }

  /// The parts rendered by their compiled forms, or `nil` when one of them leaves the request
  /// to the renderer.
  private func renderCompiled(
    _ body: CompiledTemplate, _ compiledHeaders: [CompiledTemplate], for request: URLRequest,
    sent: RequestFacts?, headers given: [String: String], maxOutputBytes: Int
  ) -> Rendered? {
    var rendered = Rendered(body: nil, headers: given, missingFile: nil)
    for (header, compiled) in zip(headers, compiledHeaders) {
      // A header without `{{` that the stub still holds as it is: nothing to change.
      if let constant = compiled.constant, constant.utf8.count <= maxOutputBytes,
        given[header.name] == constant
      {
        continue
      }
      guard
        let bytes = compiled.render(for: request, sent: sent, maxOutputBytes: maxOutputBytes)
      else {
        return nil
      }
      rendered.headers[header.name] = String(decoding: bytes, as: UTF8.self)
    }
    guard let bytes = body.render(for: request, sent: sent, maxOutputBytes: maxOutputBytes) else {
      return nil
    }
    rendered.body = sharedBody(bytes)
    return rendered
  }

  /// `bytes` as the body of an answer: the body last rendered when it holds the same bytes.
  private func sharedBody(_ bytes: [UInt8]) -> Data {
    bytes.withUnsafeBufferPointer { sharedBody($0) }
  }

  private func sharedBody(_ text: String) -> Data {
    var text = text
    return text.withUTF8 { sharedBody($0) }
  }

  private func sharedBody(_ bytes: UnsafeBufferPointer<UInt8>) -> Data {
    if let last = lastBody.withLock({ $0 }), last.count == bytes.count,
      last.withUnsafeBytes({ last in
        guard let start = last.baseAddress, let given = bytes.baseAddress else { return true }
        return memcmp(start, given, bytes.count) == 0
      })
    {
      return last
    }
    let data = Data(buffer: bytes)
    lastBody.withLock { $0 = data }
    return data
  }

  /// The file `name` (relative) from `source`, never outside its folder; `nil` when missing.
  private static func read(_ name: String, from source: FileSource) -> Data? {
    guard BundleFiles.isContained(name) else { return nil }
    switch source {
    case .folder(let folder):
      guard let folder else { return nil }
      let root = folder.standardizedFileURL.resolvingSymlinksInPath()
      let resolved = root.appendingPathComponent(name).standardizedFileURL
        .resolvingSymlinksInPath()
      guard resolved.path.hasPrefix(root.path.hasSuffix("/") ? root.path : root.path + "/") else {
        return nil
      }
      return try? Data(contentsOf: resolved)
    case .bundle(let bundle):
      let url =
        bundle.resourceURL?.appendingPathComponent(name)
        ?? bundle.bundleURL.appendingPathComponent(name)
      return try? Data(contentsOf: url)
    }
  }
}

/// JSONPath expressions parsed once and shared by the renderings of a template.
final class JSONPathCache: Sendable {
  private let paths = Locked<[String: JSONPath]>([:])

  func path(_ expression: String) throws(JSONPath.SyntaxError) -> JSONPath {
    if let cached = paths.withLock({ $0[expression] }) { return cached }
    let parsed = try JSONPath(parsing: expression)
    paths.withLock { cache in
      if cache.count < 256 { cache[expression] = parsed }
    }
    return parsed
  }
}
