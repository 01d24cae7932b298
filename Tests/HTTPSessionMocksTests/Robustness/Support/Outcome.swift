import Foundation
import TestSupport

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a completion handler received, reduced to what tests compare.
enum DeliveredOutcome: Equatable, Sendable, CustomStringConvertible {
  case success(status: Int, body: String)
  case failure(URLError.Code)
  case otherError(String)

  init(data: Data?, response: URLResponse?, error: (any Error)?) {
    if let error {
      if let urlError = error as? URLError {
        self = .failure(urlError.code)
      } else {
        self = .otherError(String(describing: error))
      }
      return
    }
    let status = (response as? HTTPURLResponse)?.statusCode ?? -1
    self = .success(status: status, body: String(decoding: data ?? Data(), as: UTF8.self))
  }

  var isCancelled: Bool { self == .failure(.cancelled) }

  var description: String {
    switch self {
    case .success(let status, let body): return "\(status) \"\(body)\""
    case .failure(let code) where code == .cancelled: return "URLError(.cancelled)"
    case .failure(let code): return "URLError(\(code.rawValue))"
    case .otherError(let text): return "error \(text)"
    }
  }
}

/// Counts, for each task of a test, how many times its handler ran and what it received.
final class HandlerLedger: Sendable {
  private struct Entry {
    var calls = 0
    var outcomes: [DeliveredOutcome] = []
  }

  private let entries: Shared<[Entry]>
  private let order = Shared<[Int]>([])

  init(count: Int) {
    entries = Shared(Array(repeating: Entry(), count: count))
  }

  /// The handler for task `index`.
  func handler(_ index: Int) -> @Sendable (Data?, URLResponse?, (any Error)?) -> Void {
    { data, response, error in
      self.record(index, DeliveredOutcome(data: data, response: response, error: error))
    }
  }

  func record(_ index: Int, _ outcome: DeliveredOutcome) {
    entries.withLock {
      $0[index].calls += 1
      $0[index].outcomes.append(outcome)
    }
    order.withLock { $0.append(index) }
  }

  func calls(_ index: Int) -> Int { entries.withLock { $0[index].calls } }
  func outcome(_ index: Int) -> DeliveredOutcome? { entries.withLock { $0[index].outcomes.last } }
  var allCalls: [Int] { entries.withLock { $0.map(\.calls) } }
  var allOutcomes: [DeliveredOutcome?] { entries.withLock { $0.map(\.outcomes.last) } }
  var deliveryOrder: [Int] { order.current }
}
