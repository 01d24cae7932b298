import Foundation

/// Why a template does not parse, and where: a line and column (from 1, in characters of the
/// template) and the offset in UTF-8 bytes.
struct TemplateSyntaxError: Error, Equatable, CustomStringConvertible {
  let reason: String
  let offset: Int
  let line: Int
  let column: Int

  var description: String { "line \(line), column \(column): \(reason)" }
}

/// A parsed Handlebars template: text, `{{value}}` outputs and blocks.
indirect enum TemplateNode: Sendable {
  case text(String)
  /// `{{expression}}` (escaped) or `{{{expression}}}` / `{{& expression}}` (not).
  case output(TemplateExpression, escaped: Bool, line: Int, column: Int)
  case block(TemplateBlock)
}

/// `{{#name params}}body{{else}}inverse{{/name}}`, or `{{^name}}...{{/name}}` (inverted).
struct TemplateBlock: Sendable {
  var call: TemplateCall
  var body: [TemplateNode]
  var inverse: [TemplateNode]
  var inverted: Bool
}

/// A helper called with its parameters and hash arguments: `name a 'b' key=c`.
struct TemplateCall: Sendable {
  var name: TemplatePath
  var params: [TemplateExpression]
  var hash: [(key: String, value: TemplateExpression)]
  var line: Int
  var column: Int
}

/// `request.pathSegments.[1]`, `this`, `../name`, `@index`.
struct TemplatePath: Sendable {
  /// How many `../` precede the segments.
  var parents: Int
  /// Whether the path starts with `@` (a data variable: `@index`, `@key`, `@first`).
  var isData: Bool
  var segments: [String]
  /// The path as written, for helper names and reports.
  var source: String
}

indirect enum TemplateExpression: Sendable {
  case path(TemplatePath)
  case literal(TemplateValue)
  /// A subexpression `(helper params)`, or a mustache with parameters.
  case call(TemplateCall)
}

/// Reads Handlebars templates as Handlebars.java does (the subset WireMock users write): text,
/// `{{path}}`, `{{{path}}}`, `{{& path}}`, comments, blocks with `{{else}}` (and
/// `{{else if ...}}`), inverted sections, subexpressions, hash arguments, literals, whitespace
/// control (`~`) and `\{{` escapes. Never traps: every problem is a ``TemplateSyntaxError``.
struct TemplateParser {
  /// Blocks and subexpressions nest at most this deep.
  static let maximumDepth = 64

  private let bytes: [UInt8]
  private var index = 0
  /// Whether the tag just closed ended with `~}}`.
  private var lastCloseStripped = false

  private init(_ text: String) { bytes = Array(text.utf8) }

  static func parse(_ text: String) throws(TemplateSyntaxError) -> [TemplateNode] {
    var parser = TemplateParser(text)
    let (nodes, end) = try parser.nodes(depth: 0)
    switch end {
    case .end: return nodes
    case .close(let name, let offset):
      throw parser.error("{{/\(name)}} closes no open block", at: offset)
    case .else(_, let offset):
      throw parser.error("{{else}} outside a block", at: offset)
    }
  }

  // MARK: - Positions and errors

  private func error(_ reason: String, at offset: Int) -> TemplateSyntaxError {
    let (line, column) = position(of: offset)
    return TemplateSyntaxError(reason: reason, offset: offset, line: line, column: column)
  }

  private func position(of offset: Int) -> (Int, Int) {
    var line = 1
    var column = 1
    var i = 0
    let end = min(offset, bytes.count)
    while i < end {
      if bytes[i] == 10 {
        line += 1
        column = 1
      } else if bytes[i] & 0xC0 != 0x80 {
        column += 1
      }
      i += 1
    }
    return (line, column)
  }

  private func peek(_ offset: Int = 0) -> UInt8? {
    let at = index + offset
    return at < bytes.count ? bytes[at] : nil
  }

  private func starts(with text: StaticString, at: Int? = nil) -> Bool {
    let start = at ?? index
    let count = text.utf8CodeUnitCount
    guard start + count <= bytes.count else { return false }
    return text.withUTF8Buffer { buffer in
      for i in 0..<count where bytes[start + i] != buffer[i] { return false }
      return true
    }
  }

  // MARK: - Nodes

  private enum End {
    case end
    case close(String, offset: Int)
    /// `{{else}}` (call `nil`) or `{{else name params}}`.
    case `else`(TemplateCall?, offset: Int)
  }

  private mutating func nodes(depth: Int) throws(TemplateSyntaxError) -> ([TemplateNode], End) {
    var nodes: [TemplateNode] = []
    var text: [UInt8] = []
    func flush() {
      if !text.isEmpty { nodes.append(.text(String(decoding: text, as: UTF8.self))) }
      text.removeAll(keepingCapacity: true)
    }
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\\"), starts(with: "{{", at: index + 1) {
        text += [UInt8(ascii: "{"), UInt8(ascii: "{")]
        index += 3
        continue
      }
      guard byte == UInt8(ascii: "{"), peek(1) == UInt8(ascii: "{") else {
        text.append(byte)
        index += 1
        continue
      }
      let start = index
      index += 2
      let triple = peek() == UInt8(ascii: "{")
      if triple { index += 1 }
      let stripBefore = peek() == UInt8(ascii: "~")
      if stripBefore { index += 1 }
      flush()
      if triple {
        let call = try expressionList(depth: depth, start: start)
        try close(triple: true, start: start)
        nodes.append(output(call, escaped: false))
        continue
      }
      skipSpaces()
      switch peek() {
      case UInt8(ascii: "!"):
        try comment(start: start)
      case UInt8(ascii: "#"):
        index += 1
        if peek() == UInt8(ascii: ">") || peek() == UInt8(ascii: "*") {
          throw error(
            "partial blocks and decorators ({{#> }}, {{#* }}) are not supported", at: start)
        }
        nodes.append(.block(try block(depth: depth, start: start, inverted: false)))
      case UInt8(ascii: "^"):
        index += 1
        skipSpaces()
        if starts(with: "}}") || starts(with: "~}}") {
          try close(triple: false, start: start)
          if stripBefore { Self.trimTrailingSpace(&nodes) }
          return (nodes, .else(nil, offset: start))
        }
        nodes.append(.block(try block(depth: depth, start: start, inverted: true)))
      case UInt8(ascii: "/"):
        index += 1
        skipSpaces()
        let name = try path(start: start)
        try close(triple: false, start: start)
        if stripBefore { Self.trimTrailingSpace(&nodes) }
        return (nodes, .close(name.source, offset: start))
      case UInt8(ascii: "&"):
        index += 1
        let call = try expressionList(depth: depth, start: start)
        try close(triple: false, start: start)
        nodes.append(output(call, escaped: false))
      case UInt8(ascii: ">"):
        throw error("partials ({{> name}}) are not supported", at: start)
      default:
        if starts(with: "else"), let after = peek(4),
          Self.isSpace(after) || after == UInt8(ascii: "}") || after == UInt8(ascii: "~")
        {
          index += 4
          skipSpaces()
          if starts(with: "}}") || starts(with: "~}}") {
            try close(triple: false, start: start)
            if stripBefore { Self.trimTrailingSpace(&nodes) }
            return (nodes, .else(nil, offset: start))
          }
          let call = try expressionList(depth: depth, start: start)
          try close(triple: false, start: start)
          return (nodes, .else(call, offset: start))
        }
        let call = try expressionList(depth: depth, start: start)
        try close(triple: false, start: start)
        nodes.append(output(call, escaped: true))
      }
    }
    flush()
    return (nodes, .end)
  }

  private func output(_ call: TemplateCall, escaped: Bool) -> TemplateNode {
    if call.params.isEmpty && call.hash.isEmpty {
      return .output(.path(call.name), escaped: escaped, line: call.line, column: call.column)
    }
    return .output(.call(call), escaped: escaped, line: call.line, column: call.column)
  }

  private mutating func block(depth: Int, start: Int, inverted: Bool)
    throws(TemplateSyntaxError) -> TemplateBlock
  {
    guard depth < Self.maximumDepth else {
      throw error("blocks nest more than \(Self.maximumDepth) deep", at: start)
    }
    let call = try expressionList(depth: depth, start: start)
    try close(triple: false, start: start)
    // Handlebars.java honours `~` only inside a block: `{{#x ~}}` trims the start of the body,
    // `{{~/x}}` its end (measured on WireMock 2.35.1); elsewhere `~` changes nothing.
    let stripStart = lastCloseStripped
    var block = try blockBody(
      call, closing: call.name.source, depth: depth, start: start, inverted: inverted)
    if stripStart, case .text(let text)? = block.body.first {
      let trimmed = String(text.drop(while: { $0.isWhitespace }))
      if trimmed.isEmpty { block.body.removeFirst() } else { block.body[0] = .text(trimmed) }
    }
    return block
  }

  private static func trimTrailingSpace(_ nodes: inout [TemplateNode]) {
    guard case .text(let text)? = nodes.last else { return }
    var trimmed = Substring(text)
    while let last = trimmed.last, last.isWhitespace { trimmed.removeLast() }
    if trimmed.isEmpty {
      nodes.removeLast()
    } else {
      nodes[nodes.count - 1] = .text(String(trimmed))
    }
  }

  /// The body (and inverse) of a block opened by `call`, through its closing tag.
  private mutating func blockBody(
    _ call: TemplateCall, closing: String, depth: Int, start: Int, inverted: Bool
  ) throws(TemplateSyntaxError) -> TemplateBlock {
    let (body, end) = try nodes(depth: depth + 1)
    var block = TemplateBlock(call: call, body: body, inverse: [], inverted: inverted)
    switch end {
    case .end:
      throw error("{{#\(call.name.source)}} is never closed (expected {{/\(closing)}})", at: start)
    case .close(let name, let offset):
      guard name == closing else {
        throw error(
          "{{/\(name)}} does not close {{#\(call.name.source)}} (expected {{/\(closing)}})",
          at: offset)
      }
    case .else(nil, _):
      let (inverse, after) = try nodes(depth: depth + 1)
      block.inverse = inverse
      switch after {
      case .close(let name, let offset) where name != closing:
        throw error(
          "{{/\(name)}} does not close {{#\(call.name.source)}} (expected {{/\(closing)}})",
          at: offset)
      case .close: break
      case .end:
        throw error(
          "{{#\(call.name.source)}} is never closed (expected {{/\(closing)}})", at: start)
      case .else(_, let offset):
        throw error("a second {{else}} in {{#\(call.name.source)}}", at: offset)
      }
    case .else(let chained?, let offset):
      guard depth + 1 < Self.maximumDepth else {
        throw error("blocks nest more than \(Self.maximumDepth) deep", at: offset)
      }
      // `{{else if x}}`: a block of its own that ends at this block's closing tag.
      let nested = try blockBody(
        chained, closing: closing, depth: depth + 1, start: offset, inverted: false)
      block.inverse = [.block(nested)]
    }
    return block
  }

  private mutating func comment(start: Int) throws(TemplateSyntaxError) {
    index += 1
    let long = starts(with: "--")
    while index < bytes.count {
      if long {
        if starts(with: "--}}") {
          index += 4
          return
        }
        if starts(with: "--~}}") {
          index += 5
          return
        }
      } else {
        if starts(with: "}}") {
          index += 2
          return
        }
        if starts(with: "~}}") {
          index += 3
          return
        }
      }
      index += 1
    }
    throw error("the comment is never closed (expected \(long ? "--}}" : "}}"))", at: start)
  }

  private mutating func close(triple: Bool, start: Int) throws(TemplateSyntaxError) {
    skipSpaces()
    lastCloseStripped = peek() == UInt8(ascii: "~")
    if lastCloseStripped { index += 1 }
    if triple {
      guard starts(with: "}}}") else { throw error(expectedClose("}}}"), at: index) }
      index += 3
    } else {
      guard starts(with: "}}") else { throw error(expectedClose("}}"), at: index) }
      index += 2
    }
  }

  private func expectedClose(_ close: String) -> String {
    guard index < bytes.count else { return "the tag is never closed (expected \(close))" }
    let end = min(bytes.count, index + 12)
    let found = String(decoding: bytes[index..<end], as: UTF8.self)
    return "expected \(close), found \(found.debugDescription)"
  }

  // MARK: - Expressions

  private mutating func skipSpaces() {
    while let byte = peek(), Self.isSpace(byte) { index += 1 }
  }

  private static func isSpace(_ byte: UInt8) -> Bool {
    byte == 32 || byte == 9 || byte == 10 || byte == 13 || byte == 12
  }

  /// Handlebars' ID: anything but whitespace and ``!"#%&'()*+,./;<=>@[\]^`{|}~``.
  private static func isIdentifier(_ byte: UInt8) -> Bool {
    if isSpace(byte) { return false }
    switch byte {
    case UInt8(ascii: "!"), UInt8(ascii: "\""), UInt8(ascii: "#"), UInt8(ascii: "%"),
      UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
      UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: "."),
      UInt8(ascii: "/"), UInt8(ascii: ";"), UInt8(ascii: "<"), UInt8(ascii: "="),
      UInt8(ascii: ">"), UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "\\"),
      UInt8(ascii: "]"), UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "{"),
      UInt8(ascii: "|"), UInt8(ascii: "}"), UInt8(ascii: "~"), 0:
      return false
    default:
      return true
    }
  }

  /// A helper or path name followed by parameters and hash arguments, up to (not through) the
  /// closing `}}` or `)`.
  private mutating func expressionList(depth: Int, start: Int) throws(TemplateSyntaxError)
    -> TemplateCall
  {
    skipSpaces()
    let (line, column) = position(of: index)
    let nameStart = index
    let name: TemplatePath
    switch try parameter(depth: depth) {
    case .expression(.path(let path)): name = path
    case .expression(.literal(let value)):
      // `{{'text'}}` and `{{42}}` output the literal.
      name = TemplatePath(parents: 0, isData: false, segments: [], source: "")
      return TemplateCall(
        name: name, params: [.literal(value)], hash: [], line: line, column: column)
    case .none:
      throw error("expected a name or a value", at: nameStart)
    default:
      throw error("expected a helper name or a path", at: nameStart)
    }
    var params: [TemplateExpression] = []
    var hash: [(key: String, value: TemplateExpression)] = []
    while true {
      skipSpaces()
      if peek() == UInt8(ascii: "|") || starts(with: "as |") {
        throw error("block parameters (as |x|) are not supported; use this and @index", at: index)
      }
      switch try parameter(depth: depth) {
      case .none:
        return TemplateCall(name: name, params: params, hash: hash, line: line, column: column)
      case .expression(let expression):
        guard hash.isEmpty else {
          throw error("a parameter after hash arguments (key=value)", at: index)
        }
        params.append(expression)
      case .hash(let key, let value): hash.append((key, value))
      }
    }
  }

  private enum Parameter {
    case expression(TemplateExpression)
    case hash(String, TemplateExpression)
  }

  /// One parameter, or `nil` at the end of the list (a closing `}}`, `~`, or `)`).
  private mutating func parameter(depth: Int) throws(TemplateSyntaxError) -> Parameter? {
    skipSpaces()
    guard let byte = peek() else { throw error("the tag is never closed (expected }})", at: index) }
    switch byte {
    case UInt8(ascii: "}"), UInt8(ascii: ")"), UInt8(ascii: "~"):
      return nil
    case UInt8(ascii: "("):
      guard depth < Self.maximumDepth else {
        throw error("subexpressions nest more than \(Self.maximumDepth) deep", at: index)
      }
      let start = index
      index += 1
      let call = try expressionList(depth: depth + 1, start: start)
      skipSpaces()
      guard peek() == UInt8(ascii: ")") else {
        throw error("the subexpression is never closed (expected ))", at: start)
      }
      index += 1
      return .expression(.call(call))
    case UInt8(ascii: "'"), UInt8(ascii: "\""):
      return .expression(.literal(.string(try quoted(byte))))
    default:
      break
    }
    if let number = number() { return .expression(.literal(number)) }
    let start = index
    // `key=value`
    var end = index
    while end < bytes.count, Self.isIdentifier(bytes[end]) { end += 1 }
    if end > index, end < bytes.count, bytes[end] == UInt8(ascii: "=") {
      let key = String(decoding: bytes[index..<end], as: UTF8.self)
      index = end + 1
      skipSpaces()
      guard case .expression(let value)? = try parameter(depth: depth) else {
        throw error("expected a value after \(key)=", at: index)
      }
      return .hash(key, value)
    }
    let path = try path(start: start)
    if !path.isData, path.parents == 0, path.segments.count == 1 {
      switch path.source {
      case "true": return .expression(.literal(.bool(true)))
      case "false": return .expression(.literal(.bool(false)))
      case "null", "undefined": return .expression(.literal(.null))
      default: break
      }
    }
    return .expression(.path(path))
  }

  private mutating func quoted(_ quote: UInt8) throws(TemplateSyntaxError) -> String {
    let start = index
    index += 1
    var text: [UInt8] = []
    while let byte = peek() {
      if byte == UInt8(ascii: "\\"), peek(1) == quote {
        text.append(quote)
        index += 2
        continue
      }
      if byte == quote {
        index += 1
        return String(decoding: text, as: UTF8.self)
      }
      text.append(byte)
      index += 1
    }
    throw error(
      "the string is never closed (expected \(Character(Unicode.Scalar(quote))))", at: start)
  }

  /// `-?[0-9]+(\.[0-9]+)?` followed by a delimiter, or `nil` (then it is an ID).
  private mutating func number() -> TemplateValue? {
    var end = index
    if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
    let digitsStart = end
    while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
    guard end > digitsStart else { return nil }
    var isDouble = false
    if end + 1 < bytes.count, bytes[end] == UInt8(ascii: "."), (48...57).contains(bytes[end + 1]) {
      isDouble = true
      end += 1
      while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
    }
    if end < bytes.count {
      let next = bytes[end]
      guard
        Self.isSpace(next) || next == UInt8(ascii: "}") || next == UInt8(ascii: ")")
          || next == UInt8(ascii: "~")
      else { return nil }
    }
    let text = String(decoding: bytes[index..<end], as: UTF8.self)
    let value: TemplateValue
    if !isDouble, let integer = Int64(text) {
      value = .integer(integer)
    } else if let double = Double(text) {
      value = .double(double)
    } else {
      return nil
    }
    index = end
    return value
  }

  private mutating func path(start: Int) throws(TemplateSyntaxError) -> TemplatePath {
    let pathStart = index
    var path = TemplatePath(parents: 0, isData: false, segments: [], source: "")
    if peek() == UInt8(ascii: "@") {
      path.isData = true
      index += 1
    }
    while starts(with: "../") {
      path.parents += 1
      index += 3
    }
    var first = true
    while true {
      if peek() == UInt8(ascii: "[") {
        let open = index
        index += 1
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "]") { end += 1 }
        guard end < bytes.count else {
          throw error("the segment [ is never closed (expected ])", at: open)
        }
        path.segments.append(String(decoding: bytes[index..<end], as: UTF8.self))
        index = end + 1
      } else if first, peek() == UInt8(ascii: "."),
        peek(1).map({ !Self.isIdentifier($0) && $0 != UInt8(ascii: "[") }) ?? true
      {
        // `.` or `./`: this context.
        index += 1
        if peek() == UInt8(ascii: "/") { index += 1 }
        if peek().map({ Self.isIdentifier($0) }) ?? false { continue }
        break
      } else {
        var end = index
        while end < bytes.count, Self.isIdentifier(bytes[end]) { end += 1 }
        guard end > index else {
          throw error(
            first ? "expected a name or a value" : "expected a name after the separator", at: index)
        }
        let segment = String(decoding: bytes[index..<end], as: UTF8.self)
        index = end
        if !(first && segment == "this" && !path.isData) { path.segments.append(segment) }
      }
      first = false
      guard let separator = peek(), separator == UInt8(ascii: ".") || separator == UInt8(ascii: "/")
      else { break }
      guard let after = peek(1), Self.isIdentifier(after) || after == UInt8(ascii: "[") else {
        break
      }
      index += 1
    }
    path.source = String(decoding: bytes[pathStart..<index], as: UTF8.self)
    return path
  }
}
