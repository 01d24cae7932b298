import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The UI-test launch bridge's reader: `MockBundle(launchEnvironment:)` and
// `URLSessionMock(launchEnvironment:)` on arbitrary environment values.
//
// Input: the value of HTTPSESSIONKIT_BUNDLE, optionally followed by the byte 0x1E and the
// contents of a file that HTTPSESSIONKIT_BUNDLE_FILE names (an empty first part then leaves
// HTTPSESSIONKIT_BUNDLE unset). Bytes that are not UTF-8 are read as an environment value
// would be, with replacement characters.

/// The file the second part goes to: one per fuzzing process, rewritten for each input.
let bundleFile = FileManager.default.temporaryDirectory.appendingPathComponent(
  "fuzz-launch-\(ProcessInfo.processInfo.processIdentifier).json")

/// One input for libFuzzer, as described above.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let (first, second) = Data(bytes: start, count: count).split(once: 0x1E)
  var environment = ["PATH": "/usr/bin"]
  let inline = String(decoding: first, as: UTF8.self)
  if !inline.isEmpty { environment[MockBundle.launchEnvironmentVariable] = inline }
  if let second {
    guard (try? second.write(to: bundleFile)) != nil else { return 0 }
    environment[MockBundle.launchEnvironmentFileVariable] = bundleFile.path
  }
  let bundle: MockBundle?
  do {
    bundle = try MockBundle(launchEnvironment: environment)
  } catch {
    checkError(error, inline: !inline.isEmpty, file: second != nil)
    return 0
  }
  check(
    !(!inline.isEmpty && second != nil), "both variables were set and nothing was thrown")
  guard let bundle else {
    check(inline.isEmpty && second == nil, "no bundle from a variable that is set")
    return 0
  }
  checkRoundTrip(bundle)
  checkMock(environment)
  return 0
}

/// A failure is a `MockBundleError` that names the variable it came from.
func checkError(_ error: any Error, inline: Bool, file: Bool) {
  guard let error = error as? MockBundleError else {
    check(false, "not a MockBundleError: \(type(of: error)) \(error)")
    return
  }
  let description = error.description
  check(!error.problem.isEmpty, "an error without a problem: \(description)")
  if inline {
    check(
      error.source == MockBundle.launchEnvironmentVariable,
      "the error does not name HTTPSESSIONKIT_BUNDLE: \(description)")
  } else if file {
    check(
      error.source == "\(MockBundle.launchEnvironmentFileVariable)=\(bundleFile.path)",
      "the error does not name HTTPSESSIONKIT_BUNDLE_FILE and its file: \(description)")
  }
  check(description.hasPrefix(error.source), "the description starts elsewhere: \(description)")
}

/// A bundle read from an environment goes back into one (unless a stub cannot be stored) and
/// reads back equal.
func checkRoundTrip(_ bundle: MockBundle) {
  let environment: [String: String]
  do {
    environment = try bundle.launchEnvironment()
  } catch {
    check(error is MockBundleError, "launchEnvironment() threw \(type(of: error)): \(error)")
    return
  }
  check(
    environment.values.allSatisfy { $0.utf8.count < 65_536 }, "a value of 64 KiB or more")
  let again: MockBundle?
  do {
    again = try MockBundle(launchEnvironment: environment)
  } catch {
    check(false, "what launchEnvironment() wrote does not read back: \(error)")
    return
  }
  check(again == bundle, "the bundle changed on its way through the environment")
}

/// The mock made from the same environment answers a request without trapping: synchronously,
/// or (a delay) on its virtual clock, which nobody advances.
func checkMock(_ environment: [String: String]) {
  let clock = VirtualClock()
  let made: URLSessionMock??
  do {
    made = try URLSessionMock(launchEnvironment: environment, clock: clock)
  } catch {
    check(false, "the mock's init threw what the bundle's did not: \(error)")
    return
  }
  guard let mock = made ?? nil else {
    check(false, "no mock from an environment that holds a bundle")
    return
  }
  for url in ["https://example.com/", "https://api.github.com/users/octocat?page=2"] {
    var request = makeRequest(url)
    request.httpMethod = "GET"
    let answered = Box(0)
    let task = mock.dataTask(with: request) { _, _, _ in answered.value += 1 }
    task.resume()
    check(answered.value <= 1, "the handler ran \(answered.value) times")
    task.cancel()
  }
}
