import Foundation

/// Short, readable descriptions of errors for call logs and reports.
enum ErrorText {
  static func describe(_ error: any Error) -> String {
    guard let urlError = error as? URLError else { return String(describing: error) }
    let name = names[urlError.code] ?? "code \(urlError.code.rawValue)"
    // A description that only restates the code ("cancelled") adds nothing.
    if let detail = urlError.userInfo[NSLocalizedDescriptionKey] as? String,
      detail.caseInsensitiveCompare(name) != .orderedSame
    {
      return "URLError(.\(name)): \(detail)"
    }
    return "URLError(.\(name))"
  }

  static let names: [URLError.Code: String] = [
    .cancelled: "cancelled", .timedOut: "timedOut",
    .notConnectedToInternet: "notConnectedToInternet",
    .networkConnectionLost: "networkConnectionLost", .resourceUnavailable: "resourceUnavailable",
    .cannotFindHost: "cannotFindHost", .cannotConnectToHost: "cannotConnectToHost",
    .badServerResponse: "badServerResponse", .cannotCreateFile: "cannotCreateFile",
    .badURL: "badURL", .unsupportedURL: "unsupportedURL", .dnsLookupFailed: "dnsLookupFailed",
    .secureConnectionFailed: "secureConnectionFailed",
    .userAuthenticationRequired: "userAuthenticationRequired",
    .cannotParseResponse: "cannotParseResponse", .zeroByteResource: "zeroByteResource",
  ]
}
