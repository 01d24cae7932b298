import Foundation

extension TemplateRenderer {
  /// `now`, `date`, `parseDate` and `dateFormat`: dates on the mock's clock, with WireMock's
  /// `offset` (`'3 days'`, `'-1 months'`), `format` (Java's date patterns, `epoch`, `unix`) and
  /// `timezone`.
  mutating func dateHelper(_ name: String, _ call: Invocation) throws(TemplateRenderError)
    -> TemplateValue
  {
    var date: Date
    switch name {
    case "now":
      date = environment.now
    case "parseDate":
      let text = call.param(0).text
      guard let parsed = parse(text, format: call.hash["format"]?.text) else {
        throw TemplateRenderError(
          message: "parseDate: \"\(text)\" is not a date this package reads")
      }
      return .date(parsed)
    default:
      switch call.param(0) {
      case .date(let given): date = given
      case .null:
        date = environment.now
      case let other:
        guard let parsed = parse(other.text, format: nil) else {
          throw TemplateRenderError(message: "\(name): \"\(other.text)\" is not a date")
        }
        date = parsed
      }
    }
    if let offset = call.hash["offset"]?.text {
      date = try Self.offset(date, by: offset)
    }
    let utc = TimeZone(identifier: "UTC") ?? .current
    // `timezone` moves `now` only: `date` ignores it (measured on WireMock 2.35.1).
    let timeZone =
      name == "now"
      ? call.hash["timezone"].flatMap { TimeZone(identifier: $0.text) } ?? utc : utc
    let format = call.hash["format"]?.text ?? (name == "dateFormat" ? call.param(1).text : "")
    switch format {
    case "":
      return name == "now" || name == "date" ? .string(Self.iso8601(date, timeZone)) : .date(date)
    case "epoch", "unix":
      let seconds = date.timeIntervalSince1970
      guard seconds.isFinite, abs(seconds) < 9e12 else {
        throw TemplateRenderError(message: "\(name): the date is outside the years a clock reads")
      }
      return .integer(Int64((format == "epoch" ? seconds * 1000 : seconds).rounded(.down)))
    default:
      guard format.utf8.allSatisfy({ $0 < 0x80 }) else {
        throw TemplateRenderError(
          message: "\(name): format='\(format)' is not a date pattern of ASCII letters")
      }
      return .string(formatter(format, timeZone).string(from: date))
    }
  }

  private static func iso8601(_ date: Date, _ timeZone: TimeZone) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = timeZone
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
  }

  private mutating func formatter(_ format: String, _ timeZone: TimeZone) -> DateFormatter {
    let key = format + "|" + timeZone.identifier
    if let cached = formatters[key] { return cached }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone
    formatter.calendar = Calendar(identifier: .gregorian)
    formatter.dateFormat = format
    formatters[key] = formatter
    return formatter
  }

  private mutating func parse(_ text: String, format: String?) -> Date? {
    // corelibs' DateFormatter traps on some text that is not ASCII ("Incorrect range", found by
    // the template fuzz target); dates in the POSIX locale are ASCII, so other text is no date.
    guard text.utf8.allSatisfy({ $0 < 0x80 }), format?.utf8.allSatisfy({ $0 < 0x80 }) ?? true
    else { return nil }
    let utc = TimeZone(identifier: "UTC") ?? .current
    if let format {
      switch format {
      case "epoch", "unix":
        guard let value = Double(text), value.isFinite, abs(value) < 9e15 else { return nil }
        return Date(timeIntervalSince1970: format == "epoch" ? value / 1000 : value)
      default: return formatter(format, utc).date(from: text)
      }
    }
    let iso = ISO8601DateFormatter()
    iso.formatOptions = [.withInternetDateTime]
    if let date = iso.date(from: text) { return date }
    iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = iso.date(from: text) { return date }
    for pattern in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd", "EEE, dd MMM yyyy HH:mm:ss zzz"] {
      if let date = formatter(pattern, utc).date(from: text) { return date }
    }
    return nil
  }

  /// `date` moved by WireMock's offset: an amount and a unit (`seconds`, `minutes`, `hours`,
  /// `days`, `weeks`, `months`, `years`, singular or plural), several separated by spaces.
  static func offset(_ date: Date, by offset: String) throws(TemplateRenderError) -> Date {
    let parts = offset.split(whereSeparator: \.isWhitespace)
    guard parts.count % 2 == 0, !parts.isEmpty else {
      throw TemplateRenderError(
        message: "offset='\(offset)' is not an amount and a unit, such as '3 days' or '-1 months'")
    }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
    var result = date
    var index = 0
    while index < parts.count {
      guard let amount = Int(parts[index]), abs(amount) <= 1_000_000 else {
        throw TemplateRenderError(
          message:
            "offset='\(offset)': \"\(parts[index])\" is not a whole number of at most 1000000")
      }
      var unit = parts[index + 1].lowercased()
      if unit.hasSuffix("s") { unit.removeLast() }
      let component: Calendar.Component
      var value = amount
      switch unit {
      case "millisecond":
        component = .nanosecond
        value = amount * 1_000_000
      case "second": component = .second
      case "minute": component = .minute
      case "hour": component = .hour
      case "day": component = .day
      case "week":
        component = .day
        value = amount * 7
      case "month": component = .month
      case "year": component = .year
      default:
        throw TemplateRenderError(
          message: "offset='\(offset)': \"\(parts[index + 1])\" is not a unit (seconds, minutes, "
            + "hours, days, weeks, months, years)")
      }
      guard let moved = calendar.date(byAdding: component, value: value, to: result) else {
        throw TemplateRenderError(message: "offset='\(offset)' leads outside the calendar")
      }
      result = moved
      index += 2
    }
    return result
  }
}
