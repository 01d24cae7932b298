import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a session handed a completion handler, reduced to the parts that a real `URLSession`
/// and ``URLSessionMock`` should agree on: status, the headers that matter, body, final URL and
/// the error's identity.
struct ParityObservation: Equatable, Sendable {
  var status: Int?
  var contentType: String?
  var contentLength: String?
  var expectedContentLength: Int64?
  /// The `X-Parity` header, which the server sets on `/plain`.
  var parityHeader: String?
  var body: Data?
  var url: String?
  var errorDomain: String?
  var errorCode: Int?
  var failingURL: String?
  var failingURLString: String?
  var errorDescription: String?

  init(_ delivery: Deliveries.Delivery) {
    let http = delivery.response as? HTTPURLResponse
    status = http?.statusCode
    contentType = http?.value(forHTTPHeaderField: "Content-Type")
    contentLength = http?.value(forHTTPHeaderField: "Content-Length")
    expectedContentLength = delivery.response?.expectedContentLength
    parityHeader = http?.value(forHTTPHeaderField: "X-Parity")
    body = delivery.data
    url = delivery.response?.url?.absoluteString
    if let error = delivery.error.map({ $0 as NSError }) {
      errorDomain = error.domain
      errorCode = error.code
      failingURL = (error.userInfo[NSURLErrorFailingURLErrorKey] as? URL)?.absoluteString
      failingURLString = error.userInfo["NSErrorFailingURLStringKey"] as? String
      errorDescription = error.localizedDescription
    }
  }

  /// A field that the comparison reads.
  enum Field: String, CaseIterable, Sendable {
    case status
    case contentType = "Content-Type"
    case contentLength = "Content-Length"
    case expectedContentLength
    case parityHeader = "X-Parity"
    case body
    case url = "response.url"
    case errorDomain = "error domain"
    case errorCode = "error code"
    case failingURL
    case failingURLString = "NSErrorFailingURLStringKey"
    case errorDescription = "localizedDescription"
  }

  /// `field` as text.
  func text(of field: Field) -> String {
    func text(_ value: (some CustomStringConvertible)?) -> String {
      value.map { "\($0)" } ?? "nil"
    }
    switch field {
    case .status: return text(status)
    case .contentType: return text(contentType)
    case .contentLength: return text(contentLength)
    case .expectedContentLength: return text(expectedContentLength)
    case .parityHeader: return text(parityHeader)
    case .body:
      return body.map {
        "\($0.count) bytes \(String(decoding: $0, as: UTF8.self).debugDescription)"
      }
        ?? "nil"
    case .url: return text(url)
    case .errorDomain: return text(errorDomain)
    case .errorCode: return text(errorCode)
    case .failingURL: return text(failingURL)
    case .failingURLString: return text(failingURLString)
    case .errorDescription: return text(errorDescription)
    }
  }

  /// Records one issue when `real` and `mock` differ in a field that is not a known gap, with
  /// both sides field by field: `≠` marks a difference, `~` a known gap (with its reason).
  ///
  /// A known gap is a place where the platform's `URLSession` is known to differ from Apple's
  /// and the mock follows Apple's; the caller asserts the gap is still there, so that it is
  /// removed from the list when the platform catches up.
  static func expectSame(
    real: ParityObservation, mock: ParityObservation, _ what: String,
    knownGaps: [Field: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let differing = Field.allCases.filter { real.text(of: $0) != mock.text(of: $0) }
    guard differing.contains(where: { knownGaps[$0] == nil }) else { return }
    let width = Field.allCases.map(\.rawValue.count).max() ?? 0
    let indent = String(repeating: " ", count: width)
    var table = "\(what): URLSession and URLSessionMock disagree.\n"
    for field in Field.allCases {
      let mark = !differing.contains(field) ? "  " : knownGaps[field] == nil ? "≠ " : "~ "
      let name = field.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
      table += "\(mark)\(name)  URLSession: \(real.text(of: field))\n"
      table += "  \(indent)  mock:       \(mock.text(of: field))\n"
    }
    for (field, reason) in knownGaps.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
      table += "~ \(field.rawValue) is a known gap: \(reason)\n"
    }
    Issue.record(Comment(rawValue: table), sourceLocation: sourceLocation)
  }
}
