// `swift run sample-app [LOGIN]`: plays the app of a UI test. It builds its GitHubClient with the
// session its launch environment names (a URLSessionMock from HTTPSESSIONKIT_BUNDLE or
// HTTPSESSIONKIT_BUNDLE_FILE, as a UI test's XCUIApplication passes it), or URLSession.shared
// without one; API_BASE_URL points it at another server (the loopback stub server); then it
// fetches one user (LOGIN, octocat by default) and prints it. Exits 0 when it got the user, 1
// when the call failed, 2 for bad arguments or a bad launch environment.

import Foundation
import HTTPSessionKit
import HTTPSessionMocksRuntime
import SampleClient

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

let usage = """
  usage: sample-app [LOGIN]

  Fetches GET /users/LOGIN (LOGIN: octocat by default) with GitHubClient and prints
  "LOGIN (id N)".

  Environment:
    HTTPSESSIONKIT_BUNDLE, HTTPSESSIONKIT_BUNDLE_FILE
                  a MockBundle from MockBundle.launchEnvironment(): the app answers from it
                  instead of the network
    API_BASE_URL  the API's root (default https://api.github.com), such as a loopback
                  server's http://127.0.0.1:PORT

  """

/// Writes `message` to standard error and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
  FileHandle.standardError.write(Data("sample-app: \(message)\n".utf8))
  exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
  print(usage, terminator: "")
  exit(0)
}
guard arguments.count <= 1, arguments.first.map({ !$0.hasPrefix("-") }) ?? true else {
  fail("unexpected arguments \(arguments.joined(separator: " "))\n\(usage)", status: 2)
}
let login = arguments.first ?? "octocat"
let environment = ProcessInfo.processInfo.environment

var baseURL = URL(string: "https://api.github.com")
if let text = environment["API_BASE_URL"], !text.isEmpty {
  let url = URL(string: text)
  guard let url, ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil
  else {
    fail("API_BASE_URL is not an http(s) URL: \(text)", status: 2)
  }
  baseURL = url
}
guard let baseURL else { fail("no base URL", status: 2) }

// Early in launch, as an app would: a mock when the UI test handed over a bundle.
let mock: URLSessionMock?
do {
  mock = try URLSessionMock(launchEnvironment: environment)
} catch {
  fail("the launch environment holds no valid bundle: \(error)", status: 2)
}

let client = GitHubClient(baseURL: baseURL, timeout: .seconds(30))
if let mock { client.session = mock }

do {
  let user = try await client.fetchUser(login)
  print("\(user.login) (id \(user.id))")
} catch {
  fail("cannot fetch the user \(login) from \(baseURL.absoluteString): \(error)", status: 1)
}
