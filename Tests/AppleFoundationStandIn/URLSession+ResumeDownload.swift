import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking

  extension URLSession {
    /// Apple's `download(resumeFrom:delegate:)`: resumes a paused download.
    ///
    /// Stands in for
    /// developer.apple.com/documentation/foundation/urlsession/download(resumefrom:delegate:)
    /// (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+), which corelibs Foundation lacks (it
    /// has `download(for:delegate:)` and `download(from:delegate:)`, as Apple has; neither
    /// declares a form without `delegate:`). Forwards to corelibs'
    /// `downloadTask(withResumeData:completionHandler:)`; the caller owns the file, as with
    /// Apple's.
    public func download(
      resumeFrom resumeData: Data, delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
      try await withCheckedThrowingContinuation { continuation in
        let task = downloadTask(withResumeData: resumeData) { file, response, error in
          guard let file, let response else {
            continuation.resume(throwing: error ?? URLError(.badServerResponse))
            return
          }
          // The handler's file is deleted when it returns: keep a copy for the caller.
          let kept = FileManager.default.temporaryDirectory
            .appendingPathComponent(UUID().uuidString)
          do {
            try FileManager.default.moveItem(at: file, to: kept)
            continuation.resume(returning: (kept, response))
          } catch {
            continuation.resume(throwing: error)
          }
        }
        task.delegate = delegate
        task.resume()
      }
    }
  }
#endif
