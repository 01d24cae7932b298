import Foundation

/// WireMock 2.35.1's helpers and the Handlebars.java ones WireMock registers, as mapping sets
/// use them. Each was compared with the real jar (see the tests).
extension TemplateRenderer {
  static let helperNames: Set<String> = [
    "if", "unless", "each", "with", "lookup", "log", "eq", "neq", "gt", "gte", "lt", "lte", "and",
    "or", "not", "contains", "matches", "assign", "now", "date", "parseDate", "dateFormat",
    "jsonPath", "size", "upper", "lower", "capitalize", "capitalizeFirst", "regexExtract",
    "randomValue", "pickRandom", "randomInt", "randomDecimal", "base64", "urlEncode", "math",
    "trim", "substring", "join", "replace", "defaultIfEmpty", "abbreviate", "stripTags",
    "numberFormat", "isOdd", "isEven", "stringFormat", "parseJson", "yesno", "formData", "rjust",
    "ljust", "center", "cut", "slugify",
  ]

  /// Calls the helper `name`, or returns `nil` when there is none by that name.
  mutating func callHelper(_ name: String, _ call: Invocation) throws(TemplateRenderError)
    -> TemplateValue?
  {
    guard Self.helperNames.contains(name) else { return nil }
    let block = call.block
    /// A condition's answer: the body or inverse for a block, `true`/`false` (or `yes`/`no`)
    /// inline.
    func decide(_ result: Bool, inverseWhenFalse: Bool = true) throws(TemplateRenderError)
      -> TemplateValue
    {
      if let block {
        if result { return .safe(try body(of: block)) }
        return .safe(inverseWhenFalse ? try inverse(of: block) : "")
      }
      if result, let yes = call.hash["yes"] { return yes }
      if !result, let no = call.hash["no"] { return no }
      return .bool(result)
    }
    switch name {
    case "if", "unless":
      let truthy = call.param(0).isTruthy
      let result = name == "if" ? truthy : !truthy
      guard let block else { return result ? call.param(1) : call.param(2) }
      return .safe(result ? try body(of: block) : try inverse(of: block))
    case "each":
      guard let block else { return .null }
      let elements = call.param(0).elements
      if elements.isEmpty { return .safe(try inverse(of: block)) }
      return .safe(try each(elements, block))
    case "with":
      guard let block else { return .null }
      let value = call.param(0)
      return .safe(value.isTruthy ? try body(of: block, context: value) : try inverse(of: block))
    case "lookup":
      return call.param(0).member(call.param(1).text)
    case "log":
      return .string("")
    case "eq": return try decide(Self.equal(call.param(0), call.param(1)))
    case "neq": return try decide(!Self.equal(call.param(0), call.param(1)))
    case "gt", "gte", "lt", "lte":
      guard let order = Self.compare(call.param(0), call.param(1)) else {
        return try decide(false)
      }
      let result: Bool
      switch name {
      case "gt": result = order == .orderedDescending
      case "gte": result = order != .orderedAscending
      case "lt": result = order == .orderedAscending
      default: result = order != .orderedDescending
      }
      return try decide(result)
    case "and": return try decide(!call.params.isEmpty && call.params.allSatisfy(\.isTruthy))
    case "or": return try decide(call.params.contains(where: \.isTruthy))
    case "not": return try decide(!call.param(0).isTruthy)
    case "contains":
      let haystack = call.param(0)
      let needle = call.param(1)
      let result: Bool
      switch haystack {
      case .array, .values:
        result = haystack.elements.contains { Self.equal($0.value, needle) }
      default:
        result =
          haystack.text.contains(needle.text) && !needle.text.isEmpty
          || (needle.text.isEmpty && haystack.isTruthy)
      }
      return try decide(result, inverseWhenFalse: false)
    case "matches":
      let result =
        Self.regex(call.param(1).text).map { regex in
          let text = call.param(0).text
          return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)).map {
            $0.range.location == 0 && $0.range.length == (text as NSString).length
          } ?? false
        } ?? false
      return try decide(result, inverseWhenFalse: false)
    case "assign":
      guard let key = call.params.first?.text, !key.isEmpty else {
        throw TemplateRenderError(message: "assign needs a variable name: {{#assign 'name'}}")
      }
      if let block {
        variables[key] = .string(
          try body(of: block).trimmingCharacters(in: .whitespacesAndNewlines))
      } else {
        variables[key] = call.hash["value"] ?? call.param(1)
      }
      return .safe("")
    case "now", "date", "parseDate", "dateFormat":
      return try dateHelper(name, call)
    case "jsonPath":
      return try jsonPath(call)
    case "parseJson":
      let text = block.map { _ in "" } ?? call.param(0).text
      let json = (try? JSONValue(parsing: Data((block == nil ? text : "").utf8))).map {
        TemplateValue(json: $0)
      }
      if let variable = call.params.count > 1 ? call.param(1).text : nil {
        variables[variable] = json ?? .null
        return .safe("")
      }
      return json ?? .null
    case "size":
      switch call.param(0) {
      case .string(let text), .safe(let text): return .integer(Int64(text.count))
      case .array(let values, _): return .integer(Int64(values.count))
      case .values(let values): return .integer(Int64(values.count))
      case .object(let members, _, _): return .integer(Int64(members.count))
      case .null: return .integer(0)
      default: return .integer(Int64(call.param(0).text.count))
      }
    case "upper": return .string(try text(call).uppercased())
    case "lower": return .string(try text(call).lowercased())
    case "capitalize":
      return .string(
        try text(call).split(separator: " ", omittingEmptySubsequences: false).map {
          $0.prefix(1).uppercased() + $0.dropFirst()
        }.joined(separator: " "))
    case "capitalizeFirst":
      let value = try text(call)
      return .string(value.prefix(1).uppercased() + value.dropFirst())
    case "trim":
      if let block {
        return .safe(try body(of: block).trimmingCharacters(in: .whitespacesAndNewlines))
      }
      return .string(call.param(0).text.trimmingCharacters(in: .whitespacesAndNewlines))
    case "regexExtract":
      return try regexExtract(call)
    case "randomValue", "randomInt", "randomDecimal", "pickRandom":
      return try random(name, call)
    case "base64":
      let value = block != nil ? try body(of: block!) : call.param(0).text
      if call.hash["decode"]?.isTruthy ?? false {
        var encoded = value.trimmingCharacters(in: .whitespacesAndNewlines)
        while encoded.count % 4 != 0 { encoded += "=" }
        guard let data = Data(base64Encoded: encoded) else { return .string("") }
        return .string(String(decoding: data, as: UTF8.self))
      }
      var encoded = Data(value.utf8).base64EncodedString()
      if let padding = call.hash["padding"], !padding.isTruthy {
        while encoded.hasSuffix("=") { encoded.removeLast() }
      }
      return .string(encoded)
    case "urlEncode":
      let value = block != nil ? try body(of: block!) : call.param(0).text
      if call.hash["decode"]?.isTruthy ?? false { return .string(Self.formDecode(value)) }
      return .string(Self.formEncode(value))
    case "math":
      return try math(call)
    case "substring":
      let value = Array(call.param(0).text)
      let start = Self.whole(call.param(1).number, 0)
      let end = call.params.count > 2 ? Self.whole(call.param(2).number, 0) : value.count
      guard start >= 0, end <= value.count, start <= end else {
        throw TemplateRenderError(
          message:
            "substring \(start)..\(end) is outside \"\(String(value))\" (\(value.count) characters)"
        )
      }
      return .string(String(value[start..<end]))
    case "join":
      return join(call)
    case "replace":
      return .string(
        call.param(0).text.replacingOccurrences(of: call.param(1).text, with: call.param(2).text))
    case "defaultIfEmpty":
      return call.param(0).isTruthy && !call.param(0).text.isEmpty ? call.param(0) : call.param(1)
    case "abbreviate":
      let value = call.param(0).text
      let width = Self.whole(call.param(1).number, 0)
      guard width >= 4 else {
        throw TemplateRenderError(message: "abbreviate needs a width of 4 or more")
      }
      return .string(value.count <= width ? value : String(value.prefix(width - 3)) + "...")
    case "stripTags":
      return .string(
        call.param(0).text.replacingOccurrences(
          of: "<[^>]*>", with: "", options: .regularExpression))
    case "cut":
      let remove = call.params.count > 1 ? call.param(1).text : " "
      return .string(call.param(0).text.replacingOccurrences(of: remove, with: ""))
    case "slugify":
      let words = call.param(0).text.lowercased().components(
        separatedBy: CharacterSet.alphanumerics.inverted
      ).filter { !$0.isEmpty }
      return .string(words.joined(separator: "-"))
    case "rjust", "ljust", "center":
      let value = call.param(0).text
      let size = min(Self.whole(call.hash["size"]?.number ?? call.param(1).number, 0), 1 << 20)
      let pad = call.hash["pad"]?.text.first.map(String.init) ?? " "
      let missing = max(0, size - value.count)
      switch name {
      case "rjust": return .string(String(repeating: pad, count: missing) + value)
      case "ljust": return .string(value + String(repeating: pad, count: missing))
      default:
        let left = missing / 2
        return .string(
          String(repeating: pad, count: left) + value
            + String(repeating: pad, count: missing - left))
      }
    case "yesno":
      let value = call.param(0)
      if case .null = value { return call.hash["maybe"] ?? .string("maybe") }
      return value.isTruthy
        ? (call.hash["yes"] ?? .string("yes")) : (call.hash["no"] ?? .string("no"))
    case "isOdd", "isEven":
      let number = Self.whole(call.param(0).number, 0)
      let odd = number % 2 != 0
      // Handlebars.java's NumberHelpers answer "odd" or "even" (or nothing), block or not.
      if name == "isOdd" { return .string(odd ? "odd" : "") }
      return .string(odd ? "" : "even")
    case "numberFormat":
      return numberFormat(call)
    case "stringFormat":
      return .string(Self.javaFormat(call.param(0).text, Array(call.params.dropFirst())))
    case "formData":
      return formData(call)
    default:
      return nil
    }
  }

  /// The text a string helper works on: its first parameter, or its block's body.
  private mutating func text(_ call: Invocation) throws(TemplateRenderError) -> String {
    if let block = call.block { return try body(of: block) }
    return call.param(0).text
  }

  /// A whole number from a template's number: truncated and clamped to ±2³¹, so that no
  /// conversion traps; `fallback` when there is none (or it is not finite).
  static func whole(_ value: Double?, _ fallback: Int) -> Int {
    guard let value, value.isFinite else { return fallback }
    return Int(max(-2_147_483_648, min(2_147_483_647, value.rounded(.towardZero))))
  }

  // MARK: - Comparisons

  /// Java's `equals` on the values WireMock holds: a number equals a number of the same kind,
  /// text equals text, and a query parameter's or header's values equal only the same values.
  static func equal(_ a: TemplateValue, _ b: TemplateValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.integer(let x), .integer(let y)): return x == y
    case (.double(let x), .double(let y)): return x == y
    case (.string(let x), .string(let y)), (.safe(let x), .safe(let y)),
      (.string(let x), .safe(let y)), (.safe(let x), .string(let y)):
      return x == y
    case (.values(let x), .values(let y)): return x == y
    case (.array(let x, _), .array(let y, _)):
      return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
    case (.date(let x), .date(let y)): return x == y
    default: return false
    }
  }

  static func compare(_ a: TemplateValue, _ b: TemplateValue) -> ComparisonResult? {
    switch (a, b) {
    case (.integer, .integer), (.double, .double), (.integer, .double), (.double, .integer):
      guard let x = a.number, let y = b.number else { return nil }
      return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    case (.string(let x), .string(let y)):
      return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    case (.date(let x), .date(let y)):
      return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    default:
      guard let x = a.number, let y = b.number else { return nil }
      return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }
  }

  static func regex(_ pattern: String) -> NSRegularExpression? {
    try? NSRegularExpression(pattern: pattern)
  }

  // MARK: - JSONPath

  private mutating func jsonPath(_ call: Invocation) throws(TemplateRenderError) -> TemplateValue {
    let expression = call.param(1).text
    let document: JSONValue?
    switch call.param(0) {
    case .string(let text), .safe(let text):
      // WireMock 2.35.1 fails the request here, whatever the default (measured).
      guard !text.isEmpty else {
        throw Self.noJSON("is empty", "json string can not be null or empty")
      }
      if let cached = parsedBodies[text] {
        document = cached
      } else {
        // The package's own parser: it never traps, and is much faster than JSONDecoder.
        let data = text.utf8.withContiguousStorageIfAvailable { Data($0) } ?? Data(text.utf8)
        document = (try? JSONCursor.parse(data, source: "body", duplicates: .lastWins))
          .flatMap { Self.jsonValue($0.node) }
        parsedBodies[text] = document
      }
    case .null: document = nil
    case let other: document = Self.json(other)
    }
    let fallback = call.hash["default"] ?? .string("")
    guard let document else { return fallback }
    if case .null = document { throw Self.noJSON("is null", "json can not be null") }
    let path: JSONPath
    do {
      if let cache = environment.paths {
        path = try cache.path(expression)
      } else {
        path = try JSONPath(parsing: expression)
      }
    } catch {
      throw TemplateRenderError(
        message: "jsonPath: \"\(expression)\" is not a JSONPath this package reads: \(error.reason)"
      )
    }
    let selected = path.select(in: document)
    if Self.isIndefinite(expression) {
      return .array(selected.map(TemplateValue.init(json:)), json: true)
    }
    guard let first = selected.first else { return fallback }
    return TemplateValue(json: first)
  }

  /// Why `jsonPath` has no document to read: its JSON `is empty` or `is null`, which WireMock
  /// 2.35.1 answers with a 500 that says `wireMock`.
  private static func noJSON(_ what: String, _ wireMock: String) -> TemplateRenderError {
    TemplateRenderError(
      message: "jsonPath: the JSON to read \(what), and WireMock 2.35.1 fails such a request "
        + "(\"\(wireMock)\"), a default notwithstanding. Stub the requests without a JSON body "
        + "apart, or read it under {{#if request.body}}.")
  }

  /// A parsed document's value, as `JSONCursor.json()` reads it (numbers by value, the last of
  /// a repeated key), or `nil` where that throws; without the cursors' paths, which only its
  /// errors use.
  static func jsonValue(_ node: JSONNode) -> JSONValue? {
    switch node {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .number(let literal): return JSONNumber.value(literal)
    case .string(let text): return .string(text)
    case .array(let nodes):
      var values: [JSONValue] = []
      values.reserveCapacity(nodes.count)
      for node in nodes {
        guard let value = jsonValue(node) else { return nil }
        values.append(value)
      }
      return .array(values)
    case .object(let members):
      // The last of a repeated key counts; the earlier ones are not read.
      var values: [String: JSONValue] = Dictionary(minimumCapacity: members.count)
      for member in members.reversed() where values[member.key] == nil {
        guard let value = jsonValue(member.value) else { return nil }
        values[member.key] = value
      }
      return .object(values)
    case .unreadable: return nil
    }
  }

  /// Whether a JSONPath may select several values (a wildcard, a deep scan, a filter, a list
  /// of indexes or a slice): then `jsonPath` gives a list, as Jayway's JsonPath does.
  static func isIndefinite(_ expression: String) -> Bool {
    let bytes = Array(expression.utf8)
    for (index, byte) in bytes.enumerated() {
      switch byte {
      case UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: "?"), UInt8(ascii: ":"):
        return true
      case UInt8(ascii: "."):
        if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ".") { return true }
      default: break
      }
    }
    return false
  }

  /// A template value as JSON, for `jsonPath` over a value that is not text.
  static func json(_ value: TemplateValue) -> JSONValue? {
    switch value {
    case .null: return .null
    case .bool(let x): return .bool(x)
    case .integer(let x): return .integer(x)
    case .double(let x): return .double(x)
    case .string(let x), .safe(let x): return try? JSONValue(parsing: Data(x.utf8))
    case .values(let values): return .array(values.map { .string($0) })
    case .date: return .string(value.text)
    case .array(let values, _): return .array(values.compactMap(json))
    case .object(let members, _, _):
      var object: [String: JSONValue] = [:]
      for member in members { object[member.key] = json(member.value) ?? .null }
      return .object(object)
    }
  }

  // MARK: - Text

  private mutating func regexExtract(_ call: Invocation) throws(TemplateRenderError)
    -> TemplateValue
  {
    let text = call.param(0).text
    let pattern = call.param(1).text
    guard let regex = Self.regex(pattern) else {
      throw TemplateRenderError(message: "regexExtract: /\(pattern)/ does not compile")
    }
    let nsText = text as NSString
    guard let match = regex.firstMatch(in: text, range: NSRange(location: 0, length: nsText.length))
    else {
      if let fallback = call.hash["default"] { return fallback }
      return .string("[ERROR: Nothing matched \(pattern)]")
    }
    if call.params.count > 2 {
      var groups: [TemplateValue] = []
      for group in 1..<max(1, match.numberOfRanges) {
        let range = match.range(at: group)
        groups.append(.string(range.location == NSNotFound ? "" : nsText.substring(with: range)))
      }
      // A list that renders its first group, as WireMock's.
      variables[call.param(2).text] = .values(groups.map(\.text))
      return .safe("")
    }
    return .string(nsText.substring(with: match.range))
  }

  private func join(_ call: Invocation) -> TemplateValue {
    guard call.params.count > 1 else {
      return .string(call.param(0).elements.map(\.value.text).joined(separator: ","))
    }
    let separator = call.params[call.params.count - 1].text
    var items: [String] = []
    for param in call.params.dropLast() {
      switch param {
      case .array, .values: items += param.elements.map(\.value.text)
      default: items.append(param.text)
      }
    }
    let prefix = call.hash["prefix"]?.text ?? ""
    let suffix = call.hash["suffix"]?.text ?? ""
    return .string(prefix + items.joined(separator: separator) + suffix)
  }

  /// Java's `URLEncoder.encode(text, UTF-8)`: letters, digits and `.-*_` stay, a space becomes
  /// `+`, every other byte `%XX`.
  static func formEncode(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"),
        UInt8(ascii: "*"), UInt8(ascii: "_"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      case UInt8(ascii: " "): out += "+"
      default:
        let hex = String(byte, radix: 16, uppercase: true)
        out += "%" + (hex.count == 1 ? "0" + hex : hex)
      }
    }
    return out
  }

  /// Java's `URLDecoder.decode(text, UTF-8)`: `+` is a space, `%XX` a byte.
  static func formDecode(_ text: String) -> String {
    guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") })
    else { return text }
    var bytes: [UInt8] = []
    let source = Array(text.utf8)
    var index = 0
    while index < source.count {
      let byte = source[index]
      if byte == UInt8(ascii: "+") {
        bytes.append(32)
      } else if byte == UInt8(ascii: "%"), index + 2 < source.count,
        let value = UInt8(String(decoding: source[index + 1...index + 2], as: UTF8.self), radix: 16)
      {
        bytes.append(value)
        index += 2
      } else {
        bytes.append(byte)
      }
      index += 1
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private mutating func formData(_ call: Invocation) -> TemplateValue {
    var members: [(key: String, value: TemplateValue)] = []
    for pair in call.param(0).text.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let key = Self.formDecode(String(parts[0]))
      let value = parts.count > 1 ? String(parts[1]) : ""
      let decoded = (call.hash["urlDecode"]?.isTruthy ?? false) ? Self.formDecode(value) : value
      if let index = members.firstIndex(where: { $0.key == key }),
        case .values(let existing) = members[index].value
      {
        members[index].value = .values(existing + [decoded])
      } else {
        members.append((key, .values([decoded])))
      }
    }
    let object = TemplateValue.object(members, json: false, caseInsensitive: false)
    if call.params.count > 1 {
      variables[call.param(1).text] = object
      return .safe("")
    }
    return object
  }

  private func numberFormat(_ call: Invocation) -> TemplateValue {
    guard let number = call.param(0).number else { return call.param(0) }
    let formatter = NumberFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    switch call.param(1).text {
    case "integer":
      formatter.numberStyle = .decimal
      formatter.maximumFractionDigits = 0
    case "percent": formatter.numberStyle = .percent
    case "currency": formatter.numberStyle = .currency
    default: formatter.numberStyle = .decimal
    }
    if let digits = call.hash["maximumFractionDigits"]?.number {
      formatter.maximumFractionDigits = max(0, min(Self.whole(digits, 0), 40))
    }
    if let digits = call.hash["minimumFractionDigits"]?.number {
      formatter.minimumFractionDigits = max(0, min(Self.whole(digits, 0), 40))
    }
    if let grouping = call.hash["groupingUsed"] {
      formatter.usesGroupingSeparator = grouping.isTruthy
    }
    return .string(formatter.string(from: NSNumber(value: number)) ?? call.param(0).text)
  }

  /// Java's `String.format` for the common conversions: `%s`, `%d`, `%f` (with a precision),
  /// `%%`.
  static func javaFormat(_ format: String, _ arguments: [TemplateValue]) -> String {
    var out = ""
    var next = 0
    var chars = Array(format)[...]
    while let char = chars.popFirst() {
      guard char == "%" else {
        out.append(char)
        continue
      }
      var spec = ""
      while let c = chars.first, c.isNumber || c == "." || c == "-" || c == "," {
        spec.append(c)
        chars.removeFirst()
      }
      guard let conversion = chars.popFirst() else { break }
      if conversion == "%" {
        out.append("%")
        continue
      }
      let argument = next < arguments.count ? arguments[next] : .null
      next += 1
      switch conversion {
      case "d": out += String(Self.whole(argument.number, 0))
      case "f":
        let precision = spec.split(separator: ".").last.flatMap { Int($0) } ?? 6
        out += String(format: "%.\(min(precision, 20))f", argument.number ?? 0)
      default: out += argument.text
      }
    }
    return out
  }

  // MARK: - Numbers

  /// WireMock's `math`: BigDecimal arithmetic, whose scale decides how the result is written
  /// (`7 / 2` is `4`, `2 * 3.5` is `7.0`).
  private func math(_ call: Invocation) throws(TemplateRenderError) -> TemplateValue {
    func operand(_ value: TemplateValue) throws(TemplateRenderError) -> (Double, Int) {
      switch value {
      case .integer(let x): return (Double(x), 0)
      case .double(let x):
        let text = "\(x)"
        let scale = text.split(separator: ".").last.map { $0 == "0" ? 1 : $0.count } ?? 1
        return (x, text.contains("e") ? 1 : scale)
      default:
        let text = value.text.trimmingCharacters(in: .whitespaces)
        guard let x = Double(text) else {
          throw TemplateRenderError(message: "math: \"\(text)\" is not a number")
        }
        let scale = text.split(separator: ".", omittingEmptySubsequences: false)
        return (x, scale.count > 1 ? scale[1].count : 0)
      }
    }
    let (a, scaleA) = try operand(call.param(0))
    let (b, scaleB) = try operand(call.param(2))
    let result: Double
    let scale: Int
    switch call.param(1).text {
    case "+":
      result = a + b
      scale = max(scaleA, scaleB)
    case "-":
      result = a - b
      scale = max(scaleA, scaleB)
    case "*":
      result = a * b
      scale = scaleA + scaleB
    case "/":
      guard b != 0 else { throw TemplateRenderError(message: "math: division by zero") }
      let factor = pow(10, Double(scaleA))
      let quotient = a / b * factor
      result =
        (quotient < 0 ? -(abs(quotient) + 0.5).rounded(.down) : (quotient + 0.5).rounded(.down))
        / factor
      scale = scaleA
    case "%":
      guard b != 0 else { throw TemplateRenderError(message: "math: division by zero") }
      result = a.truncatingRemainder(dividingBy: b)
      scale = max(scaleA, scaleB)
    default:
      throw TemplateRenderError(
        message: "math: \"\(call.param(1).text)\" is not an operator (+, -, *, / or %)")
    }
    if scale == 0, result.isFinite, abs(result) < 9.2e18 { return .integer(Int64(result)) }
    return .double(result)
  }

  // MARK: - Random

  private mutating func random(_ name: String, _ call: Invocation) throws(TemplateRenderError)
    -> TemplateValue
  {
    switch name {
    case "pickRandom":
      var options: [TemplateValue] = []
      for param in call.params {
        switch param {
        case .array, .values: options += param.elements.map(\.value)
        default: options.append(param)
        }
      }
      guard !options.isEmpty else {
        throw TemplateRenderError(message: "pickRandom needs at least one value to pick from")
      }
      return options[environment.random.below(options.count)]
    case "randomInt":
      let lower = Int64(Self.whole(call.hash["lower"]?.number, Int(Int32.min)))
      let upper = Int64(Self.whole(call.hash["upper"]?.number, Int(Int32.max)))
      guard upper > lower else { return .integer(lower) }
      let span = UInt64(upper - lower)
      return .integer(lower + Int64(environment.random.next() % span))
    case "randomDecimal":
      let lower = call.hash["lower"]?.number ?? -Double(Int32.max)
      let upper = call.hash["upper"]?.number ?? Double(Int32.max)
      let unit = Double(environment.random.next() >> 11) / Double(UInt64(1) << 53)
      return .double(lower + (upper - lower) * unit)
    default:
      let type = call.hash["type"]?.text.uppercased() ?? "ALPHANUMERIC"
      let length = Self.whole(call.hash["length"]?.number, 36)
      guard length >= 0, length <= 1 << 20 else {
        throw TemplateRenderError(message: "randomValue length=\(length) is out of range")
      }
      if type == "UUID" {
        var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: environment.random.next()) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(
          uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
          ))
        return .string(uuid.uuidString.lowercased())
      }
      let alphabet: [Character]
      switch type {
      case "NUMERIC": alphabet = Array("0123456789")
      case "ALPHABETIC": alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
      case "HEXADECIMAL": alphabet = Array("0123456789abcdef")
      case "ALPHANUMERIC_AND_SYMBOLS":
        alphabet = Array(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
        )
      case "ALPHANUMERIC":
        alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
      default:
        throw TemplateRenderError(
          message: "randomValue type='\(type)' is not one of ALPHANUMERIC, ALPHABETIC, NUMERIC, "
            + "ALPHANUMERIC_AND_SYMBOLS, HEXADECIMAL, UUID")
      }
      var out = ""
      for _ in 0..<length { out.append(alphabet[environment.random.below(alphabet.count)]) }
      if call.hash["uppercase"]?.isTruthy ?? false { out = out.uppercased() }
      return .string(out)
    }
  }
}
