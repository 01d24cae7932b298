import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Responses compare by what they answer: status, reason phrase, headers, body, error, delay
/// and dribble.
///
/// Bodies compare by their bytes, whatever form they were given in (`.text("a")` equals
/// `.data(Data("a".utf8))` with the same headers), except that two JSON bodies compare as JSON
/// values (key order and spacing aside). A fixture file (``file(_:in:status:headers:)``) is read
/// to compare it. Errors compare by domain and code (a `URLError` by its code). The given-as-is
/// form (``init(data:response:error:)``) compares its data, its response's URL, status and
/// headers, and its error. Proxied responses (``proxy(to:through:addingHeaders:removingHeaders:)``)
/// compare their base URL and header changes, and their sessions: the same object, or both
/// the response's own.
extension StubResponse: Equatable {
  /// Whether the two responses answer the same way.
  public static func == (lhs: StubResponse, rhs: StubResponse) -> Bool {
    guard lhs.delay == rhs.delay, lhs.dribble == rhs.dribble,
      lhs.delayDistribution == rhs.delayDistribution
    else { return false }
    if lhs.storage === rhs.storage { return true }
    switch (lhs.content, rhs.content) {
    case (.http(let a, let statusA, let headersA), .http(let b, let statusB, let headersB)):
      return statusA == statusB && headersA == headersB
        && lhs.storage.headerValues == rhs.storage.headerValues
        && lhs.storage.reasonPhrase == rhs.storage.reasonPhrase
        && sameBody(a, lhs.storage, b, rhs.storage)
    case (.raw(let dataA, let responseA, let errorA), .raw(let dataB, let responseB, let errorB)):
      return dataA == dataB && sameResponse(responseA, responseB) && sameError(errorA, errorB)
    case (.error(let a), .error(let b)): return sameError(a, b)
    case (.invalid(let a), .invalid(let b)): return a == b
    case (.webSocket(let protocolA, let stepsA), .webSocket(let protocolB, let stepsB)):
      return protocolA == protocolB && stepsA == stepsB
    case (.proxy(let a), .proxy(let b)):
      guard a.baseText == b.baseText, (a.baseTemplate == nil) == (b.baseTemplate == nil),
        a.addedHeaders == b.addedHeaders,
        a.removedHeaders == b.removedHeaders
      else { return false }
      switch (a.upstream, b.upstream) {
      case (.own, .own): return true
      case (.session(let x), .session(let y)):
        return (x as AnyObject) === (y as AnyObject)
      default: return false
      }
    default: return false
    }
  }

  private static func sameBody(_ a: Body, _ storageA: Storage, _ b: Body, _ storageB: Storage)
    -> Bool
  {
    if case .json(let x) = a, case .json(let y) = b {
      if x == y { return true }
      guard let left = try? JSONValue(parsing: x), let right = try? JSONValue(parsing: y) else {
        return false
      }
      return left == right
    }
    switch (storageA.bytes(of: a), storageB.bytes(of: b)) {
    case (.success(let x), .success(let y)): return x == y
    case (.failure(let x), .failure(let y)): return x.message == y.message
    default: return false
    }
  }

  private static func sameResponse(_ a: URLResponse?, _ b: URLResponse?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let x as HTTPURLResponse, let y as HTTPURLResponse):
      return x.url == y.url && x.statusCode == y.statusCode
        && (x.allHeaderFields as? [String: String]) == (y.allHeaderFields as? [String: String])
    case (let x?, let y?):
      return !(x is HTTPURLResponse) && !(y is HTTPURLResponse) && x.url == y.url
        && x.mimeType == y.mimeType && x.expectedContentLength == y.expectedContentLength
    default: return false
    }
  }

  static func sameError(_ a: (any Error)?, _ b: (any Error)?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let x as URLError, let y as URLError): return x.code == y.code && Fault(x) == Fault(y)
    case (let x?, let y?):
      let (left, right) = (x as NSError, y as NSError)
      return left.domain == right.domain && left.code == right.code
    default: return false
    }
  }
}
