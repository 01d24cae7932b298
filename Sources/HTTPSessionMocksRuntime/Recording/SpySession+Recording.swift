import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension SpySession {
  /// What this spy has exchanged so far, as a ``MockBundle`` that answers the same requests
  /// the same way, with the secrets that `redaction` names replaced by `REDACTED`.
  ///
  /// Each recorded request becomes a stub for its method and exact URL (and its body, if it had
  /// one); repeated requests replay their answers in order, the last repeating. A request that
  /// failed with a transport error replays `URLError(.networkConnectionLost)`.
  ///
  /// ```swift
  /// let spy = SpySession(wrapping: URLSession.shared)
  /// try await client(session: spy).fetchUser("octocat")
  /// let bundle = try spy.recordedBundle(redacting: .default)
  /// let offline = URLSessionMock(bundle: bundle)
  /// ```
  ///
  /// Throws a ``MockBundleError`` naming the exchange when a body was longer than
  /// ``Exchange/bodyLimit`` (the spy kept only part of it) or the response was not HTTP.
  public func recordedBundle(redacting redaction: Redaction = .default) throws -> MockBundle {
    HARFormat.bundle(from: try recordedEntries(redacting: redaction), name: "SpySession")
  }

  /// What this spy has exchanged so far, as a HAR 1.2 document, with the secrets that
  /// `redaction` names replaced by `REDACTED`.
  ///
  /// The HAR keeps each request's headers and body and each response's status, headers and
  /// body, after redaction; `cookies` arrays are left empty (cookies travel in the `Cookie` and
  /// `Set-Cookie` headers, which ``Redaction/default`` redacts).
  ///
  /// ```swift
  /// try spy.harData(redacting: .default.header("X-Trace")).write(to: fixtureURL)
  /// ```
  public func harData(redacting redaction: Redaction = .default) throws -> Data {
    try HARFormat.encode(recordedEntries(redacting: redaction))
  }

  private func recordedEntries(redacting redaction: Redaction) throws -> [HARFormat.Entry] {
    let now = HARFormat.timestamp(Date())
    return try exchanges.map { exchange in
      if exchange.bodyByteCount > (exchange.body?.count ?? 0) {
        throw MockBundleError(
          .unstorable, source: "SpySession", path: "exchange #\(exchange.taskIdentifier)",
          "its body of \(exchange.bodyByteCount) bytes was longer than Exchange.bodyLimit "
            + "(\(Exchange.bodyLimit) bytes), so the spy kept only part of it")
      }
      guard
        let entry = HARFormat.recordedEntry(
          exchange.request, data: exchange.body, response: exchange.response,
          error: exchange.error, redacting: redaction, at: now)
      else {
        throw MockBundleError(
          .unstorable, source: "SpySession", path: "exchange #\(exchange.taskIdentifier)",
          "its response is not an HTTP response, and HAR records HTTP only")
      }
      return entry
    }
  }
}

extension HARFormat {
  /// One exchange as a HAR entry, redacted: a transport error becomes status 0 with `_error`;
  /// `nil` when the response is not HTTP or the request has no absolute URL.
  static func recordedEntry(
    _ sent: URLRequest, data: Data?, response: URLResponse?, error: (any Error)?,
    redacting redaction: Redaction, at timestamp: String
  ) -> Entry? {
    let request = redaction.redact(sent)
    guard let url = request.url, ExactURL(url) != nil else { return nil }
    let headers = (request.allHTTPHeaderFields ?? [:]).map { Header(name: $0.key, value: $0.value) }
      .sorted { $0.name.lowercased() < $1.name.lowercased() }
    let recordedRequest = Request(
      method: RequestFacts.normalizedMethod(request.httpMethod), url: url, headers: headers,
      body: request.httpBody, mimeType: request.value(forHTTPHeaderField: "Content-Type"))
    if let error {
      var failed = Response(status: 0)
      failed.error = ErrorText.describe(error)
      return Entry(request: recordedRequest, response: failed, startedDateTime: timestamp)
    }
    guard let http = response as? HTTPURLResponse else { return nil }
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
      if let name = name as? String, let value = value as? String { fields[name] = value }
    }
    let contentType = http.value(forHTTPHeaderField: "Content-Type")
    let recorded = Response(
      status: http.statusCode,
      headers: redaction.redact(headers: fields).map { Header(name: $0.key, value: $0.value) }
        .sorted { $0.name.lowercased() < $1.name.lowercased() },
      body: redaction.redact(body: data ?? Data(), contentType: contentType),
      mimeType: contentType ?? "")
    return Entry(request: recordedRequest, response: recorded, startedDateTime: timestamp)
  }
}
