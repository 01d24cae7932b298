/// Finds the value a definite JSONPath names in a JSON document by scanning its bytes once,
/// without making the document: what a compiled template's `jsonPath request.body '$.name'`
/// reads (`CompiledTemplate`).
///
/// It reads only plain documents: ASCII, strings without escapes, numbers without an
/// exponent, nesting at most 64 deep, strict JSON syntax. Every such document is one the
/// package's parser reads the same way, and every value in it is one
/// ``TemplateRenderer/jsonValue(_:)`` reads. Anything else, and a selected object or array,
/// is ``Outcome/unsure``: the caller parses the body as the renderer does.
struct JSONBodyScan {
  /// What a scan gives.
  enum Outcome: Equatable {
    /// The path names nothing in the document.
    case nothing
    /// The bytes of the scalar the path names (a string with its quotes).
    case scalar(Range<Int>)
    /// The document is not a plain one, or the path names an object or array.
    case unsure
  }

  private struct Unsure: Error {}

  private let bytes: UnsafeBufferPointer<UInt8>
  private let steps: [JSONPath.DefiniteStep]
  private var offset = 0
  private var found: Range<Int>?

  /// Whether `steps` can be scanned for: ASCII member names (others may equal a key in
  /// Unicode's sense) and indexes from the start.
  static func canScan(_ steps: [JSONPath.DefiniteStep]) -> Bool {
    steps.allSatisfy {
      switch $0 {
      case .member(let name): return name.utf8.allSatisfy { $0 < 0x80 }
      case .index(let index): return index >= 0
      }
    }
  }

  /// The value `steps` (see ``canScan(_:)``) name in the JSON document `bytes`.
  static func scan(_ bytes: UnsafeBufferPointer<UInt8>, for steps: [JSONPath.DefiniteStep])
    -> Outcome
  {
    var scan = JSONBodyScan(bytes: bytes, steps: steps)
    do {
      scan.skipSpace()
      try scan.value(depth: 0, matched: 0)
      scan.skipSpace()
      guard scan.offset == bytes.count else { return .unsure }
    } catch {
      return .unsure
    }
    guard let found = scan.found else { return .nothing }
    switch bytes[found.lowerBound] {
    case UInt8(ascii: "{"), UInt8(ascii: "["): return .unsure
    default: return .scalar(found)
    }
  }

  private init(bytes: UnsafeBufferPointer<UInt8>, steps: [JSONPath.DefiniteStep]) {
    self.bytes = bytes
    self.steps = steps
  }

  private mutating func skipSpace() {
    while offset < bytes.count {
      switch bytes[offset] {
      case 0x20, 0x0A, 0x0D, 0x09: offset += 1
      default: return
      }
    }
  }

  private func byte() throws(Unsure) -> UInt8 {
    guard offset < bytes.count else { throw Unsure() }
    return bytes[offset]
  }

  /// The value here; `matched` is how many steps lead to it (`nil`: it is off the path).
  private mutating func value(depth: Int, matched: Int?) throws(Unsure) {
    guard depth <= 64 else { throw Unsure() }
    let start = offset
    switch try byte() {
    case UInt8(ascii: "{"): try object(depth: depth, matched: matched)
    case UInt8(ascii: "["): try array(depth: depth, matched: matched)
    case UInt8(ascii: "\""): try string()
    case UInt8(ascii: "t"): try word("true")
    case UInt8(ascii: "f"): try word("false")
    case UInt8(ascii: "n"): try word("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
    default: throw Unsure()
    }
    if matched == steps.count { found = start..<offset }
  }

  private mutating func object(depth: Int, matched: Int?) throws(Unsure) {
    offset += 1
    skipSpace()
    if try byte() == UInt8(ascii: "}") {
      offset += 1
      return
    }
    while true {
      guard try byte() == UInt8(ascii: "\"") else { throw Unsure() }
      let keyStart = offset + 1
      try string()
      let key = UnsafeBufferPointer(rebasing: bytes[keyStart..<(offset - 1)])
      skipSpace()
      guard try byte() == UInt8(ascii: ":") else { throw Unsure() }
      offset += 1
      skipSpace()
      var next: Int?
      if let matched, matched < steps.count, case .member(let name) = steps[matched],
        name.utf8.elementsEqual(key)
      {
        next = matched + 1
        // The last member of a name counts: forget what an earlier one gave.
        found = nil
      }
      try value(depth: depth + 1, matched: next)
      skipSpace()
      switch try byte() {
      case UInt8(ascii: ","):
        offset += 1
        skipSpace()
      case UInt8(ascii: "}"):
        offset += 1
        return
      default:
        throw Unsure()
      }
    }
  }

  private mutating func array(depth: Int, matched: Int?) throws(Unsure) {
    offset += 1
    skipSpace()
    if try byte() == UInt8(ascii: "]") {
      offset += 1
      return
    }
    var index = 0
    while true {
      var next: Int?
      if let matched, matched < steps.count, case .index(let wanted) = steps[matched],
        wanted == index
      {
        next = matched + 1
        found = nil
      }
      try value(depth: depth + 1, matched: next)
      index += 1
      skipSpace()
      switch try byte() {
      case UInt8(ascii: ","):
        offset += 1
        skipSpace()
      case UInt8(ascii: "]"):
        offset += 1
        return
      default:
        throw Unsure()
      }
    }
  }

  /// A string of printable ASCII without escapes, from its opening quote past its closing one.
  private mutating func string() throws(Unsure) {
    offset += 1
    while true {
      let byte = try byte()
      offset += 1
      if byte == UInt8(ascii: "\"") { return }
      guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { throw Unsure() }
    }
  }

  private mutating func word(_ word: StaticString) throws(Unsure) {
    let count = word.utf8CodeUnitCount
    guard offset + count <= bytes.count else { throw Unsure() }
    for index in 0..<count where bytes[offset + index] != word.utf8Start[index] {
      throw Unsure()
    }
    offset += count
    try endOfToken()
  }

  /// `-?(0|[1-9][0-9]*)(.[0-9]+)?`, at most 300 bytes (always a finite `Double`).
  private mutating func number() throws(Unsure) {
    let start = offset
    if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
    guard try isDigit(byte()) else { throw Unsure() }
    if bytes[offset] == UInt8(ascii: "0") {
      offset += 1
    } else {
      while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
    }
    if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
      offset += 1
      guard try isDigit(byte()) else { throw Unsure() }
      while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
    }
    guard offset - start <= 300 else { throw Unsure() }
    try endOfToken()
  }

  /// A literal or number ends at white space, `,`, `]`, `}` or the end.
  private func endOfToken() throws(Unsure) {
    guard offset < bytes.count else { return }
    switch bytes[offset] {
    case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"):
      return
    default:
      throw Unsure()
    }
  }

  private func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }
}
