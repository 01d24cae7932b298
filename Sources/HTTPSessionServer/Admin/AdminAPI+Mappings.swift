import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The mappings the admin API added to the mock, oldest first, each with the stub it became.
///
/// Indexed by id and by stub, so that each call costs the same with 100,000 mappings as with
/// ten: no call walks every mapping but those that list or remove them all.
final class AdminMappings: @unchecked Sendable {
  // @unchecked Sendable: `state` is a `Locked`; `mock` is a `let` of a Sendable type, and an
  // `Installed` is never changed once made.

  /// A class, so that the table by id holds a reference per mapping, not the whole mapping
  /// in each of its slots (a third of them empty).
  final class Installed {
    let mapping: WireMockMapping
    let stubs: [Stub]
    /// Whether it is one the server started with, unchanged: its file already holds it.
    let fromRoot: Bool
    /// When it was first added, for listing in order: a replaced mapping keeps its place.
    let order: Int

    init(mapping: WireMockMapping, stubs: [Stub], fromRoot: Bool, order: Int) {
      self.mapping = mapping
      self.stubs = stubs
      self.fromRoot = fromRoot
      self.order = order
    }
  }

  private struct State {
    var installed: [UUID: Installed] = [:]
    /// The mapping that made each stub, by ``Stub`` identifier.
    var byStub: [Int: UUID] = [:]
    var nextOrder = 0
    /// The mappings the server started with: what `POST /__admin/reset` and
    /// `/mappings/reset` go back to.
    var started: [WireMockMapping] = []
  }

  private let mock: URLSessionMock
  /// Whether each mapping's responses are installed as templates (see
  /// ``AdminSettings/templatesEveryResponse``); the mapping itself is kept as it was given.
  private let templatesEveryResponse: Bool
  /// Held for each whole change, the mock's stub calls included, so that two admin calls
  /// that change mappings at once apply one after the other. The mock never calls back into
  /// the admin API, and runs no user code for these calls.
  private let state = Locked(State())

  init(mock: URLSessionMock, templatesEveryResponse: Bool = false) {
    self.mock = mock
    self.templatesEveryResponse = templatesEveryResponse
  }

  /// Adds the mappings the server starts with (a `stub-server --root-dir` folder's).
  func start(with mappings: [WireMockMapping]) {
    state.withLock { state in
      state.started = mappings
      for mapping in mappings { put(mapping, fromRoot: true, in: &state) }
    }
  }

  /// The mappings that no file of the root holds yet: added or changed since the start.
  var unsaved: [WireMockMapping] {
    state.withLock { Self.ordered($0).filter { !$0.fromRoot }.map(\.mapping) }
  }

  /// Every mapping, newest first (as WireMock lists them).
  var all: [WireMockMapping] { state.withLock { Self.ordered($0).reversed().map(\.mapping) } }

  /// The mappings, oldest first.
  private static func ordered(_ state: State) -> [Installed] {
    state.installed.values.sorted { $0.order < $1.order }
  }

  /// The mapping whose stubs include the one numbered `identifier` (``Stub/identifier``).
  func mapping(ofStub identifier: Int) -> WireMockMapping? {
    state.withLock { state in state.byStub[identifier].flatMap { state.installed[$0]?.mapping } }
  }

  func mapping(_ id: UUID) -> WireMockMapping? {
    state.withLock { $0.installed[id]?.mapping }
  }

  /// Adds `mapping`, replacing one with the same id where that one was.
  func add(_ mapping: WireMockMapping) {
    state.withLock { put(mapping, in: &$0) }
  }

  /// Adds each of `mappings` in turn, as ``add(_:)`` does, under one hold of the lock; with
  /// `keepingExisting`, a mapping whose id is taken is skipped instead.
  func add(_ mappings: [WireMockMapping], keepingExisting: Bool) {
    state.withLock { state in
      for mapping in mappings where !(keepingExisting && state.installed[mapping.id] != nil) {
        put(mapping, in: &state)
      }
    }
    // What reading a large import freed goes back to the system, as after a large bundle.
    if mappings.count >= FreedMemory.largeLoad { FreedMemory.returnToSystem() }
  }

  /// Replaces the mapping with `mapping`'s id; `false` when there is none.
  func replace(_ mapping: WireMockMapping) -> Bool {
    state.withLock { state in
      guard state.installed[mapping.id] != nil else { return false }
      put(mapping, in: &state)
      return true
    }
  }

  /// Removes the mapping `id`; `false` when there is none.
  func remove(_ id: UUID) -> Bool {
    state.withLock { state in
      guard let gone = state.installed.removeValue(forKey: id) else { return false }
      uninstall([gone], in: &state)
      return true
    }
  }

  /// Removes the mappings `shouldRemove` picks, their stubs in one step; returns how many
  /// went.
  @discardableResult
  func remove(where shouldRemove: (WireMockMapping) -> Bool) -> Int {
    let count = state.withLock { state in
      let gone = state.installed.values.filter { shouldRemove($0.mapping) }
      for installed in gone { state.installed[installed.mapping.id] = nil }
      uninstall(gone, in: &state)
      return gone.count
    }
    if count >= FreedMemory.largeLoad { FreedMemory.returnToSystem() }
    return count
  }

  /// The mappings back to those the server started with.
  func reset() {
    state.withLock { state in
      let gone = Array(state.installed.values)
      state.installed = [:]
      uninstall(gone, in: &state)
      for mapping in state.started { put(mapping, fromRoot: true, in: &state) }
    }
  }

  /// Installs `mapping` in the place of the one with its id, if any, or after every other.
  /// Called with the lock held.
  private func put(_ mapping: WireMockMapping, fromRoot: Bool = false, in state: inout State) {
    let order: Int
    if let old = state.installed.removeValue(forKey: mapping.id) {
      order = old.order
      uninstall([old], in: &state)
    } else {
      order = state.nextOrder
      state.nextOrder += 1
    }
    var bundle = MockBundle()
    bundle.append(
      templatesEveryResponse ? mapping.entry.templatingEveryResponse() : mapping.entry)
    let stubs = mock.load(bundle)
    for stub in stubs { state.byStub[stub.identifier] = mapping.id }
    state.installed[mapping.id] = Installed(
      mapping: mapping, stubs: stubs, fromRoot: fromRoot, order: order)
  }

  /// Removes the stubs of `gone` from the mock, all in one step. Called with the lock held.
  private func uninstall(_ gone: [Installed], in state: inout State) {
    let stubs = gone.flatMap(\.stubs)
    guard !stubs.isEmpty else { return }
    for stub in stubs { state.byStub[stub.identifier] = nil }
    mock.removeStubs(stubs)
  }
}

extension WireMockMapping {
  /// The name of the file `POST /__admin/mappings/save` writes this mapping to:
  /// `name-id.json`, the name lowercased with every character but letters and digits made `-`
  /// and cut to its first 200 bytes of UTF-8 (WireMock cuts it to 200 characters), so that the
  /// whole name (at most 242 bytes) fits every file system's limit of 255; `id.json` without a
  /// name.
  var savedFileName: String {
    var slug = ""
    var bytes = 0
    for character in (name ?? "").lowercased() {
      let kept: Character = character.isLetter || character.isNumber ? character : "-"
      bytes += kept.utf8.count
      guard bytes <= 200 else { break }
      slug.append(kept)
    }
    return (slug.isEmpty ? "" : slug + "-") + id.uuidString.lowercased() + ".json"
  }
}

extension AdminAPI {
  /// The mappings and scenarios endpoints, or `nil` when `call` is not one of them.
  func mappingReply(to call: AdminCall) -> Reply? {
    switch (call.method, call.segments) {
    case ("GET", ["mappings"]):
      return listMappings()
    case ("POST", ["mappings"]):
      return decoding(call) { mapping in
        mappings.add(mapping)
        return Reply(201, try mapping.jsonValue())
      }
    case ("DELETE", ["mappings"]):
      // The running server's mappings only: no file is ever deleted.
      mappings.remove { _ in true }
      return Reply(200, AdminJSON.empty)
    case ("POST", ["mappings", "reset"]):
      mappings.reset()
      return Reply(200, AdminJSON.empty)
    case ("POST", ["mappings", "import"]):
      return importMappings(call)
    case ("POST", ["mappings", "save"]):
      return saveMappings()
    case ("POST", ["mappings", "remove-by-metadata"]):
      return removeByMetadata(call)
    case ("GET", let path) where path.count == 2 && path[0] == "mappings":
      guard let id = WireMockMapping.id(exactly: path[1]), let mapping = mappings.mapping(id) else {
        return Self.noMapping(path[1])
      }
      return Self.replying { Reply(200, try mapping.jsonValue()) }
    case ("PUT", let path) where path.count == 2 && path[0] == "mappings":
      guard let id = WireMockMapping.id(exactly: path[1]), mappings.mapping(id) != nil else {
        return Self.noMapping(path[1])
      }
      return decoding(call) { mapping in
        var mapping = mapping
        mapping.id = id
        guard mappings.replace(mapping) else { return Self.noMapping(path[1]) }
        return Reply(200, try mapping.jsonValue())
      }
    case ("DELETE", let path) where path.count == 2 && path[0] == "mappings":
      guard let id = WireMockMapping.id(exactly: path[1]), mappings.remove(id) else {
        return Self.noMapping(path[1])
      }
      return Reply(200, AdminJSON.empty)
    case ("GET", ["scenarios"]):
      return listScenarios()
    case ("POST", ["scenarios", "reset"]):
      resetScenarios()
      return Reply(200, AdminJSON.empty)
    case ("PUT", let path) where path.count == 3 && path[0] == "scenarios" && path[2] == "state":
      return setScenario(path[1], call)
    default:
      return nil
    }
  }

  /// The mappings back to those the server started with.
  func resetMappings() { mappings.reset() }

  /// Every scenario back to its start.
  func resetScenarios() { mock.resetScenarios() }

  // MARK: - Mappings

  private func listMappings() -> Reply {
    Self.replying {
      let all = try mappings.all.map { try $0.jsonValue() }
      return Reply(
        200,
        .object([
          "mappings": .array(all), "meta": .object(["total": .integer(Int64(all.count))]),
        ]))
    }
  }

  /// Reads the body as one mapping and answers with `body`, or 422 naming what is wrong.
  private func decoding(_ call: AdminCall, _ body: (WireMockMapping) throws -> Reply) -> Reply {
    let mapping: WireMockMapping
    do {
      mapping = try WireMockMapping(json: call.body, source: call.source)
    } catch {
      return Self.invalid(error)
    }
    return Self.replying { try body(mapping) }
  }

  /// `{"mappings": [...], "importOptions": {"duplicatePolicy": "OVERWRITE" | "IGNORE",
  /// "deleteAllNotInImport": false}}`: every mapping read before any is added.
  private func importMappings(_ call: AdminCall) -> Reply {
    let read: WireMockImport
    do {
      read = try WireMockImport(json: call.body, source: call.source)
    } catch {
      return Self.invalid(error)
    }
    if read.deletesOthers {
      let ids = Set(read.mappings.map(\.id))
      mappings.remove { !ids.contains($0.id) }
    }
    mappings.add(read.mappings, keepingExisting: read.ignoresDuplicates)
    return Reply(200, AdminJSON.empty)
  }

  /// Writes the mappings added or changed through the API to `mappings/` of the root folder,
  /// one file a mapping named by its name and id (``WireMockMapping/savedFileName``), as
  /// WireMock does; the root's own mappings are in their files already, and no other file is
  /// touched (a root mapping changed through the API is written to a new file, beside its old
  /// one).
  private func saveMappings() -> Reply {
    guard let root = settings.rootDirectory else {
      return Reply(
        422,
        AdminJSON.errors(
          code: 10, title: "No root folder",
          detail: "This server was started without a WireMock root folder (stub-server "
            + "--root-dir DIR), so it has nowhere to save mappings."))
    }
    return Self.replying {
      // Every file's name and text first, then the writes: a mapping that cannot be written
      // (its JSON cannot be made) leaves no file written, instead of some.
      let files = try mappings.unsaved.map { ($0.savedFileName, try $0.json()) }
      let folder = root.appendingPathComponent("mappings", isDirectory: true)
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      for (name, data) in files {
        try data.write(to: folder.appendingPathComponent(name), options: .atomic)
      }
      return Reply(200, AdminJSON.empty)
    }
  }

  private func removeByMetadata(_ call: AdminCall) -> Reply {
    let pattern: WireMockMetadataPattern
    do {
      pattern = try WireMockMetadataPattern(json: call.body, source: call.source)
    } catch {
      return Self.invalid(error)
    }
    mappings.remove(where: pattern.matches)
    return Reply(200, AdminJSON.empty)
  }

  // MARK: - Scenarios

  /// Every scenario with its state, its possible states and its mappings, in one pass over
  /// the mappings (grouped by scenario first), so that listing costs the same per mapping
  /// with 8,000 scenarios as with one.
  private func listScenarios() -> Reply {
    Self.replying {
      var tied: [String: [JSONValue]] = [:]
      var states: [String: Set<String>] = [:]
      for mapping in mappings.all {
        guard let name = mapping.entry.scenario else { continue }
        tied[name, default: []].append(try mapping.jsonValue())
        for state in [mapping.entry.whenState, mapping.entry.willSetState] {
          if let state { states[name, default: []].insert(state) }
        }
      }
      let scenarios: [JSONValue] = mock.scenarioNames.map { name in
        var possible = states[name] ?? []
        possible.insert(URLSessionMock.initialNamedScenarioState)
        return .object([
          "id": .string(name), "name": .string(name),
          "state": .string(mock.scenarioState(of: name)),
          "possibleStates": .array(possible.sorted().map { .string($0) }),
          "mappings": .array(tied[name] ?? []),
        ])
      }
      return Reply(200, .object(["scenarios": .array(scenarios)]))
    }
  }

  private func setScenario(_ name: String, _ call: AdminCall) -> Reply {
    guard mock.scenarioNames.contains(name) else {
      return Reply(404, AdminJSON.errors(code: 404, title: "Scenario \(name) does not exist"))
    }
    let state: String
    do {
      state = try WireMockMapping.scenarioState(json: call.body, source: call.source)
    } catch {
      return Self.invalid(error)
    }
    mock.setScenarioState(state, of: name)
    return Reply(200, AdminJSON.empty)
  }

  // MARK: - Helpers

  private static func noMapping(_ id: String) -> Reply {
    Reply(404, AdminJSON.errors(code: 404, title: "No mapping with id \(id)."))
  }

  /// `body`'s reply, or 500 with the error when it throws (a mapping that cannot be written,
  /// a folder that cannot be made).
  private static func replying(_ body: () throws -> Reply) -> Reply {
    do {
      return try body()
    } catch {
      return Reply(
        500, AdminJSON.errors(code: 500, title: "Error", detail: String(describing: error)))
    }
  }
}
