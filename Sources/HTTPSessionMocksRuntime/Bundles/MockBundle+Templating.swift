import Foundation

extension MockBundle {
  /// What the bundle's files hold that was loaded but will not answer as their own tool would
  /// answer it, one line each, naming the file and the place in it: a WireMock transformer
  /// this package does not have, a response template that does not parse (its requests fail
  /// with that report, as in WireMock).
  ///
  /// ```swift
  /// let bundle = try MockBundle(contentsOf: wireMockRoot)
  /// for note in bundle.notes { print(note) }
  /// ```
  ///
  /// `stub-server` prints them when it loads a bundle.
  public var notes: [String] { entries.flatMap(\.notes) }

  /// This bundle with every response read as a Handlebars template (see
  /// ``StubResponse/templated(seed:)``), as WireMock's `--global-response-templating` reads
  /// every mapping.
  ///
  /// ```swift
  /// let mock = URLSessionMock(bundle: try MockBundle(contentsOf: root).templatingEveryResponse())
  /// ```
  ///
  /// Responses that are templated already keep their templates; a proxy's base URL that holds
  /// `{{` is rendered for each request; error answers, other proxies and bodies given as bytes
  /// are as they were. `stub-server --global-response-templating` also templates the mappings
  /// added later through the admin API.
  public func templatingEveryResponse() -> MockBundle {
    var copy = self
    copy.entries = entries.map { $0.templatingEveryResponse() }
    return copy
  }
}

extension MockBundle.Entry {
  /// This entry with every response a template (see ``MockBundle/templatingEveryResponse()``).
  package func templatingEveryResponse() -> MockBundle.Entry {
    var copy = self
    copy.responses = responses.map { $0.isTemplated ? $0 : $0.templated() }
    return copy
  }
}
