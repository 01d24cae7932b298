import Foundation

/// Why a template could not be rendered for a request.
struct TemplateRenderError: Error, Equatable, CustomStringConvertible {
  let message: String
  var description: String { message }
}

/// What a template reads besides the request: the mock's clock (as a date) and its seeded
/// random source.
struct TemplateEnvironment: Sendable {
  var now: Date
  var random: SeededRandom
  /// The most bytes a rendering may produce (the response body limit).
  var maxOutputBytes: Int = TemplateRenderer.defaultMaxOutputBytes
  /// The most steps a rendering may take.
  var maxSteps: Int = TemplateRenderer.maximumSteps
  /// Where parsed JSONPath expressions are kept between renderings.
  var paths: JSONPathCache? = nil
}

/// Renders parsed templates: Handlebars.java's semantics for the nodes, WireMock's helpers.
/// Loops and output are bounded: a template that would run away fails with a
/// ``TemplateRenderError`` instead.
struct TemplateRenderer {
  /// The response body limit: 32 MiB, the loopback server's default body limit.
  static let defaultMaxOutputBytes = 32 << 20
  /// The most nodes, loop turns and helper calls one rendering may take.
  static let maximumSteps = 5_000_000

  var environment: TemplateEnvironment
  /// `this` and the contexts around it, the request model's root first.
  private var contexts: [TemplateValue]
  /// `@index`, `@key`, `@first`, `@last`, innermost last.
  private var data: [[String: TemplateValue]] = [[:]]
  /// Variables set by `#assign` and `regexExtract`.
  var variables: [String: TemplateValue] = [:]
  private var steps = 0
  /// Every byte appended to any output, nested ones included: bounds the work.
  private var produced = 0
  /// The request body parsed as JSON, once per rendering.
  var parsedBodies: [String: JSONValue?] = [:]
  var formatters: [String: DateFormatter] = [:]

  init(context: TemplateValue, environment: TemplateEnvironment) {
    contexts = [context]
    self.environment = environment
  }

  /// Renders `nodes` with the request model `context`.
  static func render(
    _ nodes: [TemplateNode], context: TemplateValue, environment: inout TemplateEnvironment
  ) throws(TemplateRenderError) -> String {
    var renderer = TemplateRenderer(context: context, environment: environment)
    let text = try renderer.render(nodes)
    environment = renderer.environment
    return text
  }

  mutating func render(_ nodes: [TemplateNode]) throws(TemplateRenderError) -> String {
    var out = ""
    // Room for a few pieces: growing from a small string one piece at a time reallocates.
    if nodes.count > 2 { out.reserveCapacity(nodes.count * 16) }
    for node in nodes {
      try step()
      switch node {
      case .text(let text):
        try append(text, to: &out)
      case .output(let expression, let escaped, let line, let column):
        let value: TemplateValue
        do {
          value = try evaluate(expression)
        } catch {
          throw TemplateRenderError(message: "line \(line), column \(column): \(error.message)")
        }
        if case .safe(let text) = value {
          try append(text, to: &out)
        } else {
          try append(escaped ? Self.escape(value.text) : value.text, to: &out)
        }
      case .block(let block):
        let value: TemplateValue
        do {
          value = try renderBlock(block)
        } catch {
          if error.message.hasPrefix("line ") { throw error }
          throw TemplateRenderError(
            message: "line \(block.call.line), column \(block.call.column): \(error.message)")
        }
        try append(value.text, to: &out)
      }
    }
    return out
  }

  private mutating func step() throws(TemplateRenderError) {
    steps += 1
    if steps > environment.maxSteps {
      throw TemplateRenderError(
        message:
          "the template ran more than \(environment.maxSteps) steps (a loop over too much?); "
          + "it was stopped")
    }
  }

  private mutating func append(_ text: String, to out: inout String) throws(TemplateRenderError) {
    let count = text.utf8.count
    produced += count
    if out.utf8.count + count > environment.maxOutputBytes
      || produced > environment.maxOutputBytes * 8
    {
      throw TemplateRenderError(
        message: "the template's output is larger than the response body limit of "
          + "\(environment.maxOutputBytes) bytes; it was stopped")
    }
    out += text
  }

  /// Handlebars.java's HTML escaping: `& < > " ' ` =`.
  static func escape(_ text: String) -> String {
    guard
      text.utf8.contains(where: {
        $0 == 38 || $0 == 60 || $0 == 62 || $0 == 34 || $0 == 39 || $0 == 96 || $0 == 61
      })
    else { return text }
    var out = ""
    out.reserveCapacity(text.utf8.count + 16)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#x27;"
      case "`": out += "&#x60;"
      case "=": out += "&#x3D;"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  // MARK: - Values

  mutating func evaluate(_ expression: TemplateExpression) throws(TemplateRenderError)
    -> TemplateValue
  {
    switch expression {
    case .literal(let value): return value
    case .path(let path):
      if path.parents == 0, !path.isData, path.segments.count == 1,
        let value = try callHelper(path.source, Invocation(params: [], hash: [:], block: nil))
      {
        return value
      }
      return lookup(path)
    case .call(let call):
      try step()
      if call.name.source.isEmpty {
        guard let first = call.params.first else { return .null }
        return try evaluate(first)
      }
      let invocation = try invocation(of: call, block: nil)
      if let value = try callHelper(call.name.source, invocation) { return value }
      throw TemplateRenderError(
        message: "there is no helper named \"\(call.name.source)\" (WireMock 2.35.1's helpers and "
          + "Handlebars' built-in ones are listed in the WireMock article)")
    }
  }

  private mutating func invocation(of call: TemplateCall, block: TemplateBlock?)
    throws(TemplateRenderError) -> Invocation
  {
    var params: [TemplateValue] = []
    params.reserveCapacity(call.params.count)
    for param in call.params { params.append(try evaluate(param)) }
    var hash: [String: TemplateValue] = [:]
    for (key, value) in call.hash { hash[key] = try evaluate(value) }
    return Invocation(params: params, hash: hash, block: block)
  }

  func lookup(_ path: TemplatePath) -> TemplateValue {
    if path.isData {
      guard let name = path.segments.first else { return .null }
      let frames = data.dropLast(path.parents)
      for frame in frames.reversed() {
        if let value = frame[name] { return walk(value, path.segments.dropFirst()) }
      }
      return variables[name].map { walk($0, path.segments.dropFirst()) } ?? .null
    }
    if path.parents > 0 {
      let base = contexts[max(0, contexts.count - 1 - path.parents)]
      return walk(base, path.segments[...])
    }
    guard let first = path.segments.first else { return contexts[contexts.count - 1] }
    for context in contexts.reversed() {
      let value = context.member(first)
      if case .null = value { continue }
      return walk(value, path.segments.dropFirst())
    }
    if let value = variables[first] { return walk(value, path.segments.dropFirst()) }
    return .null
  }

  private func walk(_ value: TemplateValue, _ segments: ArraySlice<String>) -> TemplateValue {
    var current = value
    for segment in segments { current = current.member(segment) }
    return current
  }

  // MARK: - Blocks

  /// A helper's parameters, hash arguments and, for a block, its body and inverse.
  struct Invocation {
    var params: [TemplateValue]
    var hash: [String: TemplateValue]
    var block: TemplateBlock?

    func param(_ index: Int) -> TemplateValue {
      params.indices.contains(index) ? params[index] : .null
    }
  }

  /// Renders the block's body, with `context` as `this` when given.
  mutating func body(
    of block: TemplateBlock, context: TemplateValue? = nil,
    data frame: [String: TemplateValue]? = nil
  ) throws(TemplateRenderError) -> String {
    if let context { contexts.append(context) }
    if let frame { data.append(frame) }
    defer {
      if context != nil { contexts.removeLast() }
      if frame != nil { data.removeLast() }
    }
    return try render(block.body)
  }

  mutating func inverse(of block: TemplateBlock) throws(TemplateRenderError) -> String {
    try render(block.inverse)
  }

  var currentContext: TemplateValue { contexts[contexts.count - 1] }

  private mutating func renderBlock(_ block: TemplateBlock) throws(TemplateRenderError)
    -> TemplateValue
  {
    try step()
    let name = block.call.name
    if !block.inverted, name.parents == 0, !name.isData, name.segments.count == 1,
      Self.helperNames.contains(name.source)
    {
      let invocation = try invocation(of: block.call, block: block)
      return try callHelper(name.source, invocation) ?? .null
    }
    if !block.call.params.isEmpty || !block.call.hash.isEmpty {
      throw TemplateRenderError(message: "there is no block helper named \"\(name.source)\"")
    }
    // A section: `{{#list}}` repeats for each element, `{{#value}}` renders with it as `this`.
    let value = lookup(name)
    if block.inverted {
      return .safe(value.isTruthy ? try inverse(of: block) : try body(of: block))
    }
    switch value {
    case .array, .values:
      let elements = value.elements
      if elements.isEmpty { return .safe(try inverse(of: block)) }
      return .safe(try each(elements, block))
    default:
      return .safe(value.isTruthy ? try body(of: block, context: value) : try inverse(of: block))
    }
  }

  /// `#each`: the body once for each element, with `@index`, `@key`, `@first` and `@last`.
  mutating func each(_ elements: [(key: String?, value: TemplateValue)], _ block: TemplateBlock)
    throws(TemplateRenderError) -> String
  {
    var out = ""
    for (index, element) in elements.enumerated() {
      try step()
      var frame: [String: TemplateValue] = [
        "index": .integer(Int64(index)), "first": .bool(index == 0),
        "last": .bool(index == elements.count - 1),
      ]
      if let key = element.key { frame["key"] = .string(key) }
      try append(try body(of: block, context: element.value, data: frame), to: &out)
    }
    return out
  }
}
