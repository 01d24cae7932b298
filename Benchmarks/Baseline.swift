import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The physical floor: the least a session can do to answer a data task with a completion
/// handler. It makes a task that stores the handler, and `resume()` calls it with a prebuilt
/// answer. Nothing is recorded, routed or locked.
///
/// `dataTask` and `resume` are `@inline(never)` because the library's are opaque calls across a
/// module boundary; an inlined floor would compare the mock with no call at all.
final class BaselineSession: Sendable {
  typealias Handler = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

  let data: Data
  let response: URLResponse

  init(data: Data, response: URLResponse) {
    self.data = data
    self.response = response
  }

  @inline(never)
  func dataTask(with request: URLRequest, completionHandler: @escaping Handler) -> BaselineTask {
    BaselineTask(session: self, handler: completionHandler)
  }
}

/// The floor's task: a stored handler, called on `resume()`.
final class BaselineTask: Sendable {
  let session: BaselineSession
  let handler: BaselineSession.Handler

  init(session: BaselineSession, handler: @escaping BaselineSession.Handler) {
    self.session = session
    self.handler = handler
  }

  @inline(never)
  func resume() {
    handler(session.data, session.response, nil)
  }
}
