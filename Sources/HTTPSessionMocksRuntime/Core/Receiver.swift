import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where a task's answer goes: a door's sink, or, for the injected door's data and upload
/// tasks, the completion handler itself. A task holds the handler until it needs a sink object
/// (a streamed body, a forward), so that the common request allocates none.
enum Receiver: Sendable {
  case sink(any ResponseSink)
  case handler(CompletionSink.Handler)
  /// A forwarding double's relay (the wrapped task is one of our doubles'): it takes the
  /// answer as it is.
  case relay(ForwardRelay)

  /// Tells a door's sink the exchange recorded for its answer (see
  /// `ResponseSink.recorded(_:)`); the handler and the relay need none.
  @inline(__always)
  func recorded(_ exchange: Exchange) {
    if case .sink(let sink) = self { sink.recorded(exchange) }
  }

  /// What is sent for a forward of this task's request (see `ResponseSink.forwarding(_:)`):
  /// the sink's say, through any relays of doubles between; the handler has none.
  func forwarding(_ request: URLRequest) -> URLRequest {
    switch self {
    case .sink(let sink): return sink.forwarding(request)
    case .handler: return request
    case .relay(let relay): return relay.forwarding(request)
    }
  }

  /// Hands over a whole answer: to the sink, or straight to the handler, with URLSession's
  /// three arguments.
  func deliver(_ answer: Answer) {
    switch self {
    case .sink(let sink): answer.send(to: sink)
    case .handler(let handler):
      if let unmatched = answer.unmatched {
        handler(nil, nil, unmatched.error)
      } else {
        handler(answer.data, answer.response, answer.error)
      }
    case .relay(let relay): relay.deliver(answer)
    }
  }

  /// The end alone, for a sink that has had the head and the body (a streamed answer).
  func finish(_ answer: Answer) {
    switch self {
    case .sink(let sink): sink.finish(answer.end)
    case .handler, .relay: deliver(answer)
    }
  }

  /// This receiver as a sink object: the handler wrapped in a ``CompletionSink``.
  var asSink: any ResponseSink {
    switch self {
    case .sink(let sink): return sink
    case .handler(let handler): return CompletionSink(handler)
    case .relay(let relay): return CompletionSink(relay.handler)
    }
  }
}
