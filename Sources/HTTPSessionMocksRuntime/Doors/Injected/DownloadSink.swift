import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The injected door's sink for download tasks: writes the body to a fresh temporary file and
/// hands the handler its URL; the file is deleted when the handler returns, unless the caller
/// owns it (the async `download(for:)`).
final class DownloadSink: ResponseSink, @unchecked Sendable {
  // @unchecked Sendable: as for `CompletionSink`, the core never calls a sink concurrently.
  typealias Handler = @Sendable (URL?, URLResponse?, (any Error)?) -> Void

  private let handler: Handler
  private let keepsFile: Bool
  private let request: URLRequest
  private var response: URLResponse?
  private var body = Data()

  init(request: URLRequest, keepsFile: Bool, _ handler: @escaping Handler) {
    self.request = request
    self.keepsFile = keepsFile
    self.handler = handler
  }

  func receive(_ response: URLResponse) {
    self.response = response
  }

  func receive(_ body: Data) {
    self.body.append(body)
  }

  func finish(_ end: ExchangeEnd) {
    switch end {
    case .failed(let error): handler(nil, response, error)
    case .unmatched(let unmatched): handler(nil, nil, unmatched.error)
    case .upgraded(let conversation): handler(nil, response, conversation.refuse())
    case .complete:
      do {
        let file = try TemporaryFile.write(body)
        handler(file, response, nil)
        if !keepsFile { try? FileManager.default.removeItem(at: file) }
      } catch {
        handler(nil, response, URLError(.cannotCreateFile, for: request))
      }
    }
  }
}
