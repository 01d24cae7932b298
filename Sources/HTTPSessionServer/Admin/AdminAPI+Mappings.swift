import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The mappings the admin API added to the mock, oldest first, each with the stub it became.
final class AdminMappings: @unchecked Sendable {
  // @unchecked Sendable: `installed` and `started` are only read and written with `lock`
  // held; `mock` is a `let` of a Sendable type.

  struct Installed {
    var mapping: WireMockMapping
    var stubs: [Stub]
    /// Whether it is one the server started with, unchanged: its file already holds it.
    var fromRoot = false
  }

  private let mock: URLSessionMock
  /// Held for each whole change, the mock's stub calls included, so that two admin calls
  /// that change mappings at once apply one after the other. The mock never calls back into
  /// the admin API, and runs no user code for these calls.
  private let lock = NSLock()
  private var installed: [Installed] = []
  /// The mappings the server started with: what `POST /__admin/reset` and
  /// `/mappings/reset` go back to.
  private var started: [WireMockMapping] = []

  init(mock: URLSessionMock) {
    self.mock = mock
  }

  /// Adds the mappings the server starts with (a `stub-server --root-dir` folder's).
  func start(with mappings: [WireMockMapping]) {
    lock.withLock {
      started = mappings
      for mapping in mappings { installed.append(install(mapping, fromRoot: true)) }
    }
  }

  /// The mappings that no file of the root holds yet: added or changed since the start.
  var unsaved: [WireMockMapping] {
    lock.withLock { installed.filter { !$0.fromRoot }.map(\.mapping) }
  }

  /// Every mapping, newest first (as WireMock lists them).
  var all: [WireMockMapping] { lock.withLock { installed.reversed().map(\.mapping) } }

  /// The mapping whose stubs include the one numbered `identifier` (``Stub/identifier``).
  func mapping(ofStub identifier: Int) -> WireMockMapping? {
    lock.withLock {
      installed.first { $0.stubs.contains { $0.identifier == identifier } }?.mapping
    }
  }

  func mapping(_ id: UUID) -> WireMockMapping? {
    lock.withLock { installed.first { $0.mapping.id == id }?.mapping }
  }

  /// Adds `mapping`, replacing one with the same id where that one was.
  func add(_ mapping: WireMockMapping) {
    lock.withLock {
      if let index = installed.firstIndex(where: { $0.mapping.id == mapping.id }) {
        uninstall(installed[index])
        installed[index] = install(mapping)
      } else {
        installed.append(install(mapping))
      }
    }
  }

  /// Replaces the mapping with `mapping`'s id; `false` when there is none.
  func replace(_ mapping: WireMockMapping) -> Bool {
    lock.withLock {
      guard let index = installed.firstIndex(where: { $0.mapping.id == mapping.id }) else {
        return false
      }
      uninstall(installed[index])
      installed[index] = install(mapping)
      return true
    }
  }

  /// Removes the mappings `shouldRemove` picks; returns how many went.
  @discardableResult
  func remove(where shouldRemove: (WireMockMapping) -> Bool) -> Int {
    lock.withLock {
      let (gone, kept) = (
        installed.filter { shouldRemove($0.mapping) },
        installed.filter { !shouldRemove($0.mapping) }
      )
      gone.forEach(uninstall)
      installed = kept
      return gone.count
    }
  }

  /// The mappings back to those the server started with.
  func reset() {
    lock.withLock {
      installed.forEach(uninstall)
      installed = started.map { install($0, fromRoot: true) }
    }
  }

  private func install(_ mapping: WireMockMapping, fromRoot: Bool = false) -> Installed {
    var bundle = MockBundle()
    bundle.append(mapping.entry)
    return Installed(mapping: mapping, stubs: mock.load(bundle), fromRoot: fromRoot)
  }

  private func uninstall(_ installed: Installed) {
    for stub in installed.stubs { stub.remove() }
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
        return Reply(201, try Self.object(mapping))
      }
    case ("DELETE", ["mappings"]):
      // The running server's mappings only: no file is ever deleted.
      mappings.remove { _ in true }
      return Reply(200, [String: Any]())
    case ("POST", ["mappings", "reset"]):
      mappings.reset()
      return Reply(200, [String: Any]())
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
      return Self.replying { Reply(200, try Self.object(mapping)) }
    case ("PUT", let path) where path.count == 2 && path[0] == "mappings":
      guard let id = WireMockMapping.id(exactly: path[1]), mappings.mapping(id) != nil else {
        return Self.noMapping(path[1])
      }
      return decoding(call) { mapping in
        var mapping = mapping
        mapping.id = id
        guard mappings.replace(mapping) else { return Self.noMapping(path[1]) }
        return Reply(200, try Self.object(mapping))
      }
    case ("DELETE", let path) where path.count == 2 && path[0] == "mappings":
      guard let id = WireMockMapping.id(exactly: path[1]),
        mappings.remove(where: { $0.id == id }) > 0
      else { return Self.noMapping(path[1]) }
      return Reply(200, [String: Any]())
    case ("GET", ["scenarios"]):
      return listScenarios()
    case ("POST", ["scenarios", "reset"]):
      resetScenarios()
      return Reply(200, [String: Any]())
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
      let all = try mappings.all.map(Self.object)
      return Reply(200, ["mappings": all, "meta": ["total": all.count]])
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
    for mapping in read.mappings
    where !(read.ignoresDuplicates && mappings.mapping(mapping.id) != nil) {
      mappings.add(mapping)
    }
    return Reply(200, [String: Any]())
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
      return Reply(200, [String: Any]())
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
    return Reply(200, [String: Any]())
  }

  // MARK: - Scenarios

  private func listScenarios() -> Reply {
    Self.replying {
      let all = try mappings.all.map(Self.object)
      let scenarios: [[String: Any]] = mock.scenarioNames.map { name in
        let tied = all.filter { $0["scenarioName"] as? String == name }
        var states = Set([URLSessionMock.initialNamedScenarioState])
        for mapping in tied {
          for key in ["requiredScenarioState", "newScenarioState"] {
            if let state = mapping[key] as? String { states.insert(state) }
          }
        }
        return [
          "id": name, "name": name, "state": mock.scenarioState(of: name),
          "possibleStates": states.sorted(), "mappings": tied,
        ]
      }
      return Reply(200, ["scenarios": scenarios])
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
    return Reply(200, [String: Any]())
  }

  // MARK: - Helpers

  /// A mapping's JSON as an object, to put in a list.
  static func object(_ mapping: WireMockMapping) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: mapping.json()) as? [String: Any] ?? [:]
  }

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
