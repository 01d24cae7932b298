import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSessionMock {
  /// Creates a mock that answers from `bundle`'s stubs, as if ``load(_:fileID:filePath:line:column:)``
  /// had added them.
  ///
  /// ```swift
  /// let mock = URLSessionMock(bundle: try MockBundle(contentsOf: fixtures), clock: clock)
  /// ```
  public convenience init(
    bundle: MockBundle, clock: (any Clock<Duration>)? = nil, fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    self.init(clock: clock, fileID: fileID, filePath: filePath, line: line, column: column)
    // No handles: nobody would keep them, and a recording's tens of thousands of stubs would
    // be made and freed for nothing.
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    _ = install(bundle, at: site, replacingEarlierUse: false, handles: false)
  }

  /// Adds the bundle's stubs, as stubs written in code are added: the newest matching stub
  /// answers, so these win over stubs registered before.
  ///
  /// Within the bundle, a later entry wins over an earlier one, except in a MockingBird bundle,
  /// where the first matching entry in file order answers (MockingBird's rule). Reports point at
  /// this line and name the entry, such as `bundle.json entry 3 (GET ://httpbin.org/ip)`.
  ///
  /// Returns the stubs' handles in the bundle's order.
  @discardableResult
  public func load(
    _ bundle: MockBundle, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) -> [Stub] {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    return install(bundle, at: site, replacingEarlierUse: false, handles: true)
  }

  /// Switches to `bundle`: removes the stubs that earlier `use` calls added and adds this
  /// bundle's, keeping the stubs registered in code and with ``load(_:fileID:filePath:line:column:)``.
  /// `nil` only removes them.
  ///
  /// MockingBird's way to simulate server states, one bundle per state:
  ///
  /// ```swift
  /// mock.use(try MockBundle(contentsOf: fixtures.appendingPathComponent("loggedOut")))
  /// ...
  /// mock.use(try MockBundle(contentsOf: fixtures.appendingPathComponent("loggedIn")))
  /// ```
  ///
  /// The switch is one step: a request sent meanwhile sees either bundle, never neither.
  @discardableResult
  public func use(
    _ bundle: MockBundle?, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) -> [Stub] {
    let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    return install(bundle ?? MockBundle(), at: site, replacingEarlierUse: true, handles: true)
  }

  /// Adds the bundle's stubs; returns their handles in the bundle's order when `handles` is
  /// true, else none. After a large bundle, gives back the memory that building the stubs
  /// freed (see ``FreedMemory``).
  private func install(
    _ bundle: MockBundle, at site: CallSite, replacingEarlierUse: Bool, handles: Bool
  ) -> [Stub] {
    let stubs = addStubs(
      of: bundle, at: site, replacingEarlierUse: replacingEarlierUse, handles: handles)
    if bundle.entries.count >= FreedMemory.largeLoad { FreedMemory.returnToSystem() }
    return stubs
  }

  private func addStubs(
    of bundle: MockBundle, at site: CallSite, replacingEarlierUse: Bool, handles: Bool
  ) -> [Stub] {
    // Registered newest-last: with MockingBird's rule the first entry must be the newest.
    let order =
      bundle.firstMatchWins
      ? Array(bundle.entries.enumerated().reversed()) : Array(bundle.entries.enumerated())
    let prepared = order.map { index, entry in
      (index, entry, RequestMatcher(entry.matcher.node, description: entry.label))
    }
    let (ids, removed) = core.withLock { state -> ([Int: Int], [StubTable.Definition]) in
      var removed: [StubTable.Definition] = []
      if replacingEarlierUse {
        for id in state.stubs.bundleStubIDs {
          if let definition = state.stubs.registry.remove(id) { removed.append(definition) }
        }
        state.stubs.bundleStubIDs = []
      }
      var ids: [Int: Int] = [:]
      for (index, entry, matcher) in prepared {
        let responder: StubTable.Responder =
          entry.dynamic.map { dynamic in .dynamic(dynamic.respond) } ?? .sequence(entry.responses)
        let id = state.stubs.add(matcher, responder: responder, site: site)
        _ = state.stubs.usage.update(id) { usage in
          usage.limit = entry.times.map { max(0, $0) }
          usage.requiredState = entry.whenState
          usage.nextState = entry.willSetState
          usage.scenario = entry.scenario
        }
        if let priority = entry.priority { state.stubs.registry.setPriority(priority, of: id) }
        if handles { ids[index] = id }
        if replacingEarlierUse { state.stubs.bundleStubIDs.append(id) }
      }
      return (ids, removed)
    }
    // Released here, outside the lock: a response closure's captures may run code in deinit.
    withExtendedLifetime(removed) {}
    for (_, entry, matcher) in prepared {
      for note in entry.notes {
        core.reporter.warn("The stub \(entry.label): \(note)", at: site)
      }
      let problems = matcher.problems
      if !problems.isEmpty {
        core.reporter.fail(
          "The stub \(entry.label) can never match: " + problems.joined(separator: " "), at: site)
      }
      if entry.dynamic == nil && entry.responses.isEmpty {
        core.reporter.fail(
          "The stub \(entry.label) has an empty list of responses; it will fail every request "
            + "it matches.", at: site)
      }
    }
    guard handles else { return [] }
    return prepared.sorted { $0.0 < $1.0 }.compactMap { index, _, matcher in
      ids[index].map { Stub(core: core, id: $0, matcher: matcher, site: site) }
    }
  }
}
