import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// Compiled into every fuzz target together with the HTTPSessionMocks sources, so that the
// harnesses can reach the module's internal types (URLPattern, PathIndex, JSONValue, ...).

/// Stops the fuzzer with a message when a property the library promises does not hold.
///
/// A failed check is a crash, so libFuzzer saves the input; `Fuzz/run` replays it to show the
/// message.
func check(
  _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
  file: StaticString = #fileID, line: UInt = #line
) {
  if !condition() {
    fatalError("fuzz check failed: \(message())", file: file, line: line)
  }
}

/// A value a `@Sendable` completion handler can write to; every delivery the harnesses wait
/// for is synchronous, inside `resume()`.
final class Box<Value>: @unchecked Sendable {
  // @unchecked Sendable: written and read on the fuzzing thread only (delivery is synchronous).
  var value: Value
  init(_ value: Value) { self.value = value }
}

/// The answer a mock gives `request`, delivered synchronously inside `resume()`.
func send(_ request: URLRequest, to mock: URLSessionMock) -> (
  status: Int?, body: Data?, error: (any Error)?
) {
  let box = Box<(status: Int?, body: Data?, error: (any Error)?, calls: Int)>(
    (nil, nil, nil, 0))
  let task = mock.dataTask(with: request) { data, response, error in
    box.value = (
      (response as? HTTPURLResponse)?.statusCode, data, error, box.value.calls + 1
    )
  }
  task.resume()
  check(box.value.calls == 1, "the handler ran \(box.value.calls) times inside resume()")
  return (box.value.status, box.value.body, box.value.error)
}

/// A request for `urlText`; when it is not a URL, a request with no URL at all.
func makeRequest(_ urlText: String) -> URLRequest {
  // swift-format-ignore: NeverForceUnwrap
  var request = URLRequest(url: URL(string: "https://example.com/")!)
  request.url = URL(string: urlText)
  return request
}

extension Data {
  /// The bytes before the first `separator` and those after it (`nil` when there is none).
  func split(once separator: UInt8) -> (Data, Data?) {
    guard let index = firstIndex(of: separator) else { return (self, nil) }
    return (self[startIndex..<index], self[(index + 1)...])
  }
}
