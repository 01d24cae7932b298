import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Builds the "what differed" parts of failure messages.
enum NearMiss {
  /// How many near misses a report lists before it summarises the rest.
  static let limit = 10

  /// Every request, numbered, with the headers and body that help tell them apart.
  static func numberedList(_ requests: [URLRequest], _ redaction: ReportRedaction) -> String {
    requests.enumerated().map { "  \($0.offset + 1). \(describe($0.element, redaction))" }
      .joined(separator: "\n") + "\n"
  }

  /// A request as reports show it: method, URL, headers (their values masked as `redaction`
  /// says), body.
  static func describe(_ request: URLRequest, _ redaction: ReportRedaction) -> String {
    var text = request.summary
    let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }
    if !headers.isEmpty {
      text +=
        "\n       headers: "
        + headers.map { "\($0.key): \(redaction.shown($0.value, ofHeader: $0.key))" }
        .joined(separator: ", ")
    }
    if let body = request.httpBody, !body.isEmpty {
      text += "\n       body: \(BodyText(body))"
    }
    return text
  }

  /// The recorded requests compared with `matcher`: those that match, then the others closest
  /// first, each with what differed.
  static func requestReport(
    _ requests: [URLRequest], against matcher: RequestMatcher, _ redaction: ReportRedaction
  ) -> String {
    if requests.isEmpty { return "No requests were sent.\n" }
    let evaluated = requests.enumerated().map {
      (
        index: $0.offset, request: $0.element,
        result: matcher.evaluate(RequestFacts($0.element), redaction: redaction)
      )
    }
    var text = ""
    let matching = evaluated.filter(\.result.matched)
    if !matching.isEmpty {
      text += "Matching requests:\n"
      for entry in matching {
        text += "  \(entry.index + 1). \(describe(entry.request, redaction))\n"
      }
    }
    let others = evaluated.filter { !$0.result.matched }.sorted {
      ($0.result.distance, $0.index) < ($1.result.distance, $1.index)
    }
    if !others.isEmpty {
      text +=
        matching.isEmpty ? "Sent requests, closest first:\n" : "Other requests, closest first:\n"
      for entry in others {
        text += "  \(entry.index + 1). \(describe(entry.request, redaction))\n"
        for mismatch in entry.result.mismatches { text += "       - \(mismatch)\n" }
      }
    }
    return text
  }

  /// The report for a request that no stub matched: the request, then the closest stubs.
  ///
  /// `bodyUnseen` says that the request came through a URLProtocol as an upload task, whose
  /// body URL loading never shows a protocol: when a stub missed on the body, the report says
  /// why and what to do. `traits` are the door's: what its client got (the loopback server
  /// answers `404` with the report as its body, the other doors fail with
  /// `URLError(.resourceUnavailable)`) and which notes apply. `voice` says how to name the
  /// stubs and what to advise.
  static func unmatchedReport(
    _ request: URLRequest, _ stubs: [(definition: StubTable.Definition, reasons: [String])],
    bodyUnseen: Bool = false, traits: DoorTraits = .injected, voice: ReportVoice = .code,
    redaction: ReportRedaction
  ) -> String {
    var text = "No stub matches \(describe(request, redaction))\n"
    text += "\(traits.unmatchedOutcome)\n"
    if stubs.isEmpty { return text + voice.noStubsNote(for: request) }
    text += "Closest stubs:\n"
    for (number, stub) in stubs.prefix(limit).enumerated() {
      let name = voice.name(
        stub.definition.matcher.description(redacting: redaction),
        registeredAt: stub.definition.site)
      text += "  \(number + 1). \(name)\n"
      for reason in stub.reasons { text += "       - \(reason)\n" }
    }
    if stubs.count > limit { text += "  … and \(stubs.count - limit) more\n" }
    if bodyUnseen, stubs.contains(where: { $0.reasons.contains { $0.hasPrefix("body") } }) {
      text += bodyUnseenNote
    }
    if traits.notesConfigurationHeaders,
      stubs.contains(where: { $0.reasons.contains { $0.hasPrefix("header ") } })
    {
      text += configurationHeadersNote
    }
    if traits.notesMissedOrigin, let origin = missedOrigin(stubs.first?.reasons ?? []) {
      text += voice.originNote(for: origin)
    }
    return text + voice.unmatchedAdviceLine
  }

  /// The origin (`https://api.example.com`) that the closest stub expected, when it missed on
  /// the request's scheme, host or port: a stub written with an absolute URL, and a request
  /// that reached the loopback server under the server's own address.
  private static func missedOrigin(_ reasons: [String]) -> String? {
    var parts: [String: String] = [:]
    for reason in reasons {
      for part in ["scheme", "host", "port"] where reason.hasPrefix("\(part): expected ") {
        let rest = reason.dropFirst("\(part): expected ".count)
        parts[part] = rest.components(separatedBy: ", got ").first
      }
    }
    guard let host = parts["host"] else { return nil }
    let scheme = parts["scheme"] ?? "https"
    let port = parts["port"].flatMap(Int.init).map { ":\($0)" } ?? ""
    return "\(scheme)://\(host)\(port)"
  }

  /// Why a header matcher may miss a request that came through a URLProtocol.
  static let configurationHeadersNote =
    "The request came through a URLSession that the mock intercepts: URL loading never shows a "
    + "URLProtocol the headers of the session configuration's httpAdditionalHeaders (an "
    + "event-source client's Accept and Cache-Control are often set there). The mock adds those "
    + "it read where it intercepted the configuration (intercept(_:), makeURLSession("
    + "configuration:)), but not those set on the configuration after that, nor those of a "
    + "session it never saw the configuration of (URLSession.shared in "
    + "interceptingSharedSession), so such headers are missing from this request and from the "
    + "journal. Set the headers before intercepting the configuration, set them on the request "
    + "itself, match without them, or serve the code through the loopback server, which sees "
    + "every header.\n"

  /// Why a body matcher cannot match an upload task that came through a URLProtocol.
  static let bodyUnseenNote =
    "The request is an upload task made through a URLSession that the mock intercepts: URL "
    + "loading never shows a URLProtocol the body of uploadTask(with:from:) or "
    + "upload(for:from:) (the request reaches the mock with no body), so a body matcher cannot "
    + "match it. Send the body as the request's httpBody on a data task (data(for:), "
    + "dataTask(with:)), or inject the mock itself as the HTTPSession, which sees every body.\n"

  /// A matcher spelling that would match `request`, for suggestions in reports.
  static func suggestedMatcher(for request: URLRequest) -> String {
    let facts = RequestFacts(request)
    let path = facts.path.replacing("\"", with: "\\\"")
    if ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"].contains(facts.method) {
      return ".\(facts.method.lowercased())(\"\(path)\")"
    }
    return ".method(\"\(facts.method)\", \"\(path)\")"
  }

  /// A short list of what was sent, for reports about stubs.
  static func sentSummary(_ requests: [URLRequest], _ redaction: ReportRedaction) -> String {
    if requests.isEmpty { return "No requests were sent.\n" }
    return "Sent requests:\n" + numberedList(requests, redaction)
  }
}
