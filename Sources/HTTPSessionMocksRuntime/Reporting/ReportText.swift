/// Text for reports that may hold header values that ``ReportRedaction`` masks: a matcher's
/// description, kept in pieces so that each report renders it with its double's redaction.
struct ReportText: Sendable, Hashable {
  enum Piece: Sendable, Hashable {
    case text(String)
    /// The value of the header `name`, which a redaction may mask.
    case headerValue(name: String, value: String)
  }

  private(set) var pieces: [Piece]

  init(_ text: String) {
    pieces = text.isEmpty ? [] : [.text(text)]
  }

  /// `header NAME: VALUE`, its value maskable.
  static func header(_ name: String, _ value: String?) -> ReportText {
    var text = ReportText("header \(name)")
    if let value {
      text.pieces.append(.text(": "))
      text.pieces.append(.headerValue(name: name, value: value))
    }
    return text
  }

  static func + (lhs: ReportText, rhs: ReportText) -> ReportText {
    var joined = lhs
    for piece in rhs.pieces { joined.append(piece) }
    return joined
  }

  static func + (lhs: ReportText, rhs: String) -> ReportText { lhs + ReportText(rhs) }
  static func + (lhs: String, rhs: ReportText) -> ReportText { ReportText(lhs) + rhs }

  private mutating func append(_ piece: Piece) {
    if case .text(let next) = piece, case .text(let last)? = pieces.last {
      pieces[pieces.count - 1] = .text(last + next)
    } else {
      pieces.append(piece)
    }
  }

  /// The text, with the header values that `redaction` masks masked.
  func rendered(_ redaction: ReportRedaction) -> String {
    var result = ""
    for piece in pieces {
      switch piece {
      case .text(let text): result += text
      case .headerValue(let name, let value): result += redaction.shown(value, ofHeader: name)
      }
    }
    return result
  }
}
