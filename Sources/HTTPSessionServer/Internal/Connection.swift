import Dispatch
import Foundation
import HTTPSessionMocksRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One accepted client connection, served by one thread from ``run()`` to its end.
///
/// The thread reads and parses requests, hands each to the mock through the
/// ``ExchangeHandler`` and waits for the sink's events, then writes the answer, in order,
/// one request at a time (pipelined requests wait in the parser's buffer). It waits in `poll`
/// on the socket and on a ``WakeSignal``, which the sink (from any thread) and ``stop()`` wake.
final class Connection: @unchecked Sendable {
  // @unchecked Sendable: `parser` and the read buffer belong to the connection's own thread;
  // everything other threads touch is in `shared`, behind its lock.

  private enum Event: @unchecked Sendable {
    // @unchecked Sendable: a `URLResponse` is not mutated once the mock hands it over.
    /// An answer given at once.
    case whole(URLResponse?, Data?, ExchangeEnd)
    /// The head of an answer whose body follows in pieces (a dribbled stub).
    case response(URLResponse)
    case body(Data)
    case finish(ExchangeEnd)
  }

  private struct Shared {
    var events: [Event] = []
    var exchange = 0
    var stopping = false
    var closed = false
    /// Whether the connection's thread waits (or is about to wait) in `poll` for an answer;
    /// only then does an event need the wake signal. An answer given synchronously inside
    /// `send` costs no system call.
    var waiting = false
    /// Where the mock sent the current exchange's request on (a proxied stub's upstream), if it
    /// did: a failure of the exchange is then the upstream's, answered `502` or `504`.
    var upstream: URL?
  }

  /// The connection's side of the seam: queues what the mock answers for the connection's
  /// thread. Events of an exchange that is over (cancelled, stopped) are dropped. The core
  /// hands an answer it has whole to `receiveWhole`, and calls `receive` for each part only
  /// when it streams the body; that is how the connection knows to write chunks.
  private final class Sink: ResponseSink {
    let connection: Connection
    let exchange: Int
    init(connection: Connection, exchange: Int) {
      self.connection = connection
      self.exchange = exchange
    }
    func receive(_ response: URLResponse) { connection.deliver(.response(response), exchange) }
    func receive(_ body: Data) { connection.deliver(.body(body), exchange) }
    func finish(_ end: ExchangeEnd) { connection.deliver(.finish(end), exchange) }
    func receiveWhole(_ response: URLResponse?, _ body: Data?, _ end: ExchangeEnd) {
      connection.deliver(.whole(response, body, end), exchange)
    }
    func forwarding(_ request: URLRequest) -> URLRequest {
      connection.forwarding(request, exchange)
    }
  }

  let fd: Int32
  private let wake: WakeSignal
  private let limits: ServerLimits
  private let handler: any ExchangeHandler
  private let baseURL: String
  private let hop: ViaHop
  private let shared = Locked(Shared())
  private var parser: HTTPRequestParser
  private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
  private var headCache = ResponseEncoder.HeadCache()
  private var headerNames = HeaderNames()

  init(
    fd: Int32, limits: ServerLimits, handler: any ExchangeHandler, baseURL: String, hop: ViaHop
  ) throws {
    wake = try WakeSignal()
    self.fd = fd
    self.limits = limits
    self.handler = handler
    self.baseURL = baseURL
    self.hop = hop
    self.parser = HTTPRequestParser(
      maxHeadBytes: limits.maxHeadBytes, maxBodyBytes: limits.maxBodyBytes)
    if handler is AdminExchangeHandler { parser.maxAdminBodyBytes = limits.maxAdminBodyBytes }
  }

  /// Asks the connection's thread to stop: it cancels the exchange in progress and closes.
  func stop() {
    shared.withLock { shared in
      shared.stopping = true
      wakeLocked(shared)
    }
  }

  /// Serves the connection until it closes, then closes its descriptors.
  func run() {
    serve()
    shared.withLock { $0.closed = true }
    Socket.closeDescriptor(fd)
    wake.close()
  }

  private var isStopping: Bool { shared.withLock { $0.stopping } }

  private func deliver(_ event: Event, _ exchange: Int) {
    shared.withLock { shared in
      guard !shared.closed, shared.exchange == exchange else { return }
      shared.events.append(event)
      if shared.waiting { wakeLocked(shared) }
    }
  }

  /// The request the mock sends on for exchange `exchange`, with this server's `Via` element
  /// after the client's; notes where it goes, for a `502` or `504` that names it.
  private func forwarding(_ request: URLRequest, _ exchange: Int) -> URLRequest {
    var forwarded = request
    forwarded.setValue(
      hop.appended(to: request.value(forHTTPHeaderField: "Via")), forHTTPHeaderField: "Via")
    shared.withLock { shared in
      if shared.exchange == exchange { shared.upstream = request.url }
    }
    return forwarded
  }

  /// Wakes the connection's thread, unless its descriptors are closed.
  private func wakeLocked(_ shared: Shared) {
    guard !shared.closed else { return }
    wake.wake()
  }

  // MARK: - The request loop

  private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

  private static func nanoseconds(_ duration: Duration) -> UInt64 {
    duration.deadlineNanoseconds
  }

  private func serve() {
    // The head of the first request must arrive within `headerTimeout` of the accept.
    var deadline = Self.now() + Self.nanoseconds(limits.headerTimeout)
    var idle = false
    /// Set while a request's body is arriving.
    var body: BodyWatch?
    var continued = false
    while !isStopping {
      switch parser.next() {
      case .failure(.adminBodyTooLarge):
        rejectAdminBody()
        return
      case .failure(let error):
        reject(status: error.status, reason: error.reason)
        return
      case .request(let request):
        body = nil
        continued = false
        guard exchange(request) else { return }
        idle = parser.isIdle
        let timeout = idle ? limits.idleTimeout : limits.headerTimeout
        deadline = Self.now() + Self.nanoseconds(timeout)
        continue
      case .needMore:
        break
      }
      if let head = parser.pendingHead {
        if body == nil {
          // The body bytes that came with the head count in the first period.
          body = BodyWatch(from: Self.now(), limits: limits)
          body?.received(parser.bufferedByteCount)
        }
        if head.expectsContinue, !continued {
          continued = true
          guard writeAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
        }
      }
      let now = Self.now()
      if body != nil {
        if let reason = body?.check(at: now) {
          reject(status: 408, reason: reason)
          return
        }
        deadline = body?.nextCheck ?? deadline
      }
      guard now < deadline else { return }
      let timeout = Int32(clamping: (deadline - now) / 1_000_000 + 1)
      let ready = Socket.poll(
        [(fd, Int16(POLLIN)), (wake.readDescriptor, Int16(POLLIN))], timeout: timeout)
      if ready[1] != 0 { wake.drain() }
      guard ready[0] != 0 else { continue }
      switch receive() {
      case .closed: return
      case .wouldBlock: continue
      case .bytes(let count):
        if idle {
          idle = false
          deadline = Self.now() + Self.nanoseconds(limits.headerTimeout)
        }
        body?.received(count)
      }
    }
  }

  /// The limits on a request body while it arrives: a total deadline (``ServerLimits/bodyTimeout``)
  /// and a minimum rate (``ServerLimits/minBodyBytesPerPeriod`` in every
  /// ``ServerLimits/minBodyRatePeriod``), both counted from the end of the head.
  struct BodyWatch {
    private let deadline: UInt64
    private let period: UInt64
    private let required: Int
    private var periodEnd: UInt64
    private var periodBytes = 0
    private let limits: ServerLimits

    init(from start: UInt64, limits: ServerLimits) {
      self.limits = limits
      let total = Connection.nanoseconds(limits.bodyTimeout).addingReportingOverflow(start)
      deadline = total.overflow ? UInt64.max : total.partialValue
      required = limits.minBodyBytesPerPeriod
      period = Connection.nanoseconds(limits.minBodyRatePeriod)
      let end = period.addingReportingOverflow(start)
      periodEnd = required <= 0 || period == 0 || end.overflow ? UInt64.max : end.partialValue
    }

    /// When the body must next be checked: its deadline, or the end of the current period.
    var nextCheck: UInt64 { min(deadline, periodEnd) }

    /// Counts body bytes that arrived.
    mutating func received(_ count: Int) {
      periodBytes += count
    }

    /// Why the body is too slow at `now`, or `nil` while it may go on (a new period starts
    /// when one ended with enough bytes).
    mutating func check(at now: UInt64) -> String? {
      if now >= deadline {
        return "The request body did not arrive within \(limits.bodyTimeout)."
      }
      guard now >= periodEnd else { return nil }
      guard periodBytes >= required else {
        return "The request body arrived more slowly than \(required) bytes in "
          + "\(limits.minBodyRatePeriod) (\(periodBytes) bytes came in the last period)."
      }
      periodBytes = 0
      let end = period.addingReportingOverflow(now)
      periodEnd = end.overflow ? UInt64.max : end.partialValue
      return nil
    }
  }

  /// Reads what is available into the parser.
  private func receive() -> Socket.Received {
    let result = readBuffer.withUnsafeMutableBytes { Socket.receive(fd, into: $0) }
    if case .bytes(let count) = result { parser.append(readBuffer[0..<count]) }
    return result
  }

  // MARK: - One exchange

  /// Answers one request; returns whether the connection stays open for the next.
  private func exchange(_ request: HTTPRequest) -> Bool {
    guard let urlRequest = Self.urlRequest(for: request, baseURL: baseURL, names: &headerNames)
    else {
      reject(status: 400, reason: "The request target is not a valid URL path.")
      return false
    }
    if hop.isListed(
      in: request.headers.lazy.filter { HTTPRequest.sameName($0.name, "Via") }.map(\.value))
    {
      // This server sent the request on itself: a loop of proxies, which would go round until
      // every hop's time is up. The request reached the door, which answers it itself.
      let reason =
        "The request came back to this server (its Via header lists \(hop.element), which this "
        + "server adds to the requests it sends on): a proxied stub or pass-through leads back "
        + "here, directly or through other proxies. Point it at another server."
      record(refusal: 508, reason: reason, [], of: urlRequest, kind: .data)
      reject(status: 508, reason: reason)
      return false
    }
    /// A valid WebSocket upgrade goes to the mock as a WebSocket task; an invalid one is
    /// refused here, with what is wrong.
    var upgrade: WebSocketHandshake.Request?
    if WebSocketHandshake.isUpgrade(header: request.value(of:)) {
      switch WebSocketHandshake.validate(method: request.method, header: request.value(of:)) {
      case .failure(let refusal):
        let reason = "The WebSocket upgrade is refused: \(refusal.reason)."
        let extraFields = refusal.status == 426 ? [("Sec-WebSocket-Version", "13")] : []
        // The request reached the door, which answers it itself: an exchange in the journal.
        record(
          refusal: refusal.status, reason: reason, extraFields, of: urlRequest, kind: .webSocket)
        reject(status: refusal.status, reason: reason, extraFields: extraFields)
        return false
      case .success(let handshake):
        upgrade = handshake
      }
    }
    let id = shared.withLock { shared in
      shared.exchange += 1
      shared.events = []
      shared.upstream = nil
      return shared.exchange
    }
    let cancel = handler.send(
      urlRequest, kind: upgrade == nil ? .data : .webSocket,
      to: Sink(connection: self, exchange: id))
    let keepsAlive = request.keepsAlive
    var response: URLResponse?
    var body = Data()
    var outcome: ExchangeEnd?
    /// Set once the head of a streamed answer is written: its pieces go out as they come.
    var framing: ResponseEncoder.Framing?
    while outcome == nil {
      let (events, stopping) = shared.withLock { shared in
        defer { shared.events = [] }
        // From here on, an event must wake the thread: it may be about to poll.
        shared.waiting = true
        return (shared.events, shared.stopping)
      }
      var written = true
      for event in events where outcome == nil && written {
        switch event {
        case .whole(let head, let data, let end):
          if framing == nil {
            response = head
            if let data { body.append(data) }
          }
          outcome = end
        case .response(let head):
          guard framing == nil else { continue }
          response = head
          let streamed = ResponseEncoder.encodeStreamedHead(
            response: head, request: request, keepsAlive: keepsAlive)
          framing = streamed.framing
          written = writeAll(streamed.bytes)
        case .body(let piece):
          if let framing {
            written = writeAll(ResponseEncoder.encodePiece(piece, framing: framing))
          } else {
            body.append(piece)
          }
        case .finish(let end):
          outcome = end
        }
      }
      if outcome != nil { break }
      if !written || stopping || !waitDuringExchange() {
        shared.withLock { $0.waiting = false }
        cancel()
        return false
      }
    }
    let upstream = shared.withLock { shared in
      shared.exchange += 1
      shared.waiting = false
      return shared.upstream
    }
    if let framing {
      // A streamed answer: its end, or, cut short, a close that leaves the body incomplete.
      guard case .complete = outcome else { return false }
      guard writeAll(ResponseEncoder.encodeEnd(framing: framing)) else { return false }
      return framing != .untilClose && keepsAlive && ResponseEncoder.allowsKeepAlive(response)
    }
    switch outcome {
    case .complete:
      // A large body is written from where it is, after the head, instead of being copied
      // behind the head first (a 30 MiB admin answer would cost 30 MiB more).
      let apart = body.count > Self.bodyWrittenApart
      let bytes = ResponseEncoder.encode(
        response: response, body: body, request: request, keepsAlive: keepsAlive,
        cache: &headCache, withBody: !apart)
      guard writeAll(bytes) else { return false }
      if apart, ResponseEncoder.carriesBody(response, to: request, cache: &headCache) {
        guard writeAll(body) else { return false }
      }
      return keepsAlive && ResponseEncoder.allowsKeepAlive(response)
    case .unmatched(let answer):
      let bytes = ResponseEncoder.encodeText(
        status: answer.status, text: answer.report, request: request, keepsAlive: keepsAlive)
      guard writeAll(bytes) else { return false }
      return keepsAlive
    case .failed(let error):
      if let upstream {
        // The upstream failed, not a stub: a gateway's answer, naming it.
        guard
          let bytes = Self.gatewayFailure(
            error, upstream: upstream, request: request, keepsAlive: keepsAlive)
        else { return false }
        guard writeAll(bytes) else { return false }
        return keepsAlive
      }
      if let urlError = error as? URLError, urlError.isStubCannotAnswer {
        // A stub that cannot answer (a template that fails to render): as WireMock, a 500
        // that says why, and the connection closes.
        _ = writeAll(
          ResponseEncoder.encodeText(
            status: 500, text: "\(urlError.localizedDescription)\n", request: request,
            keepsAlive: false))
        return false
      }
      fault(for: error)
      return false
    case .upgraded(let conversation):
      guard let upgrade else {
        _ = conversation.refuse()
        return false
      }
      let subprotocol = (response as? HTTPURLResponse)?.value(
        forHTTPHeaderField: "Sec-WebSocket-Protocol")
      let head = ResponseEncoder.encodeSwitchingProtocols(
        accept: WebSocketHandshake.accept(forKey: upgrade.key), subprotocol: subprotocol)
      guard writeAll(head) else {
        conversation.connectionLost()
        return false
      }
      let session = WebSocketSession(
        fd: fd, wake: wake, limits: limits, handler: handler,
        write: { [unowned self] in writeAll($0) }, isStopping: { [unowned self] in isStopping })
      session.run(conversation, leftover: parser.takeBuffered())
      return false
    case nil:
      return false
    }
  }

  /// Waits for a sink event, the stop signal, or the client: pipelined bytes are buffered
  /// (up to a head's worth); returns `false` if the client went away.
  private func waitDuringExchange() -> Bool {
    let reading = parser.bufferedByteCount <= limits.maxHeadBytes
    let ready = Socket.poll(
      [(fd, reading ? Int16(POLLIN) : 0), (wake.readDescriptor, Int16(POLLIN))], timeout: -1)
    if ready[1] != 0 { wake.drain() }
    if ready[0] & Int16(POLLHUP | POLLERR) != 0 { return false }
    if ready[0] != 0, case .closed = receive() { return false }
    return true
  }

  /// What a stub's `URLError` looks like on the wire (WireMock's faults).
  private func fault(for error: any Error) {
    if let fault = StubResponse.Fault(error) {
      switch fault {
      case .connectionResetByPeer:
        // Closing with a zero linger time sends a reset instead of a FIN.
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
      case .emptyResponse:
        break
      case .malformedResponseChunk:
        _ = writeAll(
          Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + Self.garbage)
      case .randomDataThenClose:
        _ = writeAll(Self.garbage)
      }
      return
    }
    switch (error as? URLError)?.code {
    case .timedOut?:
      // Silent until the client gives up or the server stops.
      while !isStopping {
        let ready = Socket.poll(
          [(fd, Int16(POLLIN)), (wake.readDescriptor, Int16(POLLIN))], timeout: -1)
        if ready[1] != 0 { wake.drain() }
        if ready[0] & Int16(POLLHUP | POLLERR) != 0 { return }
        if ready[0] != 0 {
          // Whatever the client sends now is discarded.
          let result = readBuffer.withUnsafeMutableBytes { Socket.receive(fd, into: $0) }
          if case .closed = result { return }
        }
      }
    case .badServerResponse?, .cannotParseResponse?:
      _ = writeAll(Array("This is not an HTTP response.\r\n\r\n".utf8))
    default:
      // `.networkConnectionLost` and every other error: close without a response.
      break
    }
  }

  /// The answer to a request the mock sent on to `upstream` (a proxied stub's, a pass-through's)
  /// when that failed: `504 Gateway Timeout` when it did not answer in time, `502 Bad Gateway`
  /// otherwise (it refused the connection, closed it, answered something that is not HTTP),
  /// each naming the upstream (the URL it failed at, as URLSession reports it) and the error;
  /// `nil` for a cancel, whose client has gone.
  static func gatewayFailure(
    _ error: any Error, upstream: URL, request: HTTPRequest, keepsAlive: Bool
  ) -> [UInt8]? {
    let urlError = error as? URLError
    if urlError?.code == .cancelled { return nil }
    let target = (urlError?.failingURL ?? upstream).absoluteString
    let timedOut = urlError?.code == .timedOut
    let what =
      timedOut
      ? "The upstream \(target) did not answer in time"
      : "The upstream \(target) could not be reached or did not answer with HTTP"
    let code = urlError.map { " (URLError \($0.code.rawValue))" } ?? ""
    let text = "\(what): \(error.localizedDescription)\(code).\n"
    return ResponseEncoder.encodeText(
      status: timedOut ? 504 : 502, text: text, request: request, keepsAlive: keepsAlive)
  }

  /// The bytes WireMock writes for its malformed-chunk and random-data faults.
  private static let garbage = Array("lskdu018973t09sylgasjkfg1][]'./.sdlv".utf8)

  // MARK: - Writing

  /// The body size above which a response's body is written on its own after the head.
  private static let bodyWrittenApart = 256 * 1024

  /// Writes every byte, waiting for the socket as needed; `false` if the client stopped
  /// reading for longer than the idle timeout, went away, or the server is stopping.
  private func writeAll(_ bytes: some DataProtocol & ContiguousBytes) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes.withUnsafeBytes {
        Socket.send(fd, UnsafeRawBufferPointer(rebasing: $0[offset...]))
      }
      if sent < 0 { return false }
      offset += sent
      if offset == bytes.count { break }
      if sent == 0 {
        let ready = Socket.poll(
          [(fd, Int16(POLLOUT)), (wake.readDescriptor, Int16(POLLIN))],
          timeout: limits.idleTimeout.pollMilliseconds)
        if ready[1] != 0 {
          wake.drain()
          if isStopping { return false }
        }
        if ready[0] & Int16(POLLHUP | POLLERR) != 0 { return false }
        if ready == [0, 0] { return false }
      }
    }
    return true
  }

  /// Tells the mock of the answer ``reject(status:reason:extraFields:)`` writes to `request`,
  /// which the server received and refused itself (a WebSocket upgrade it cannot accept, a
  /// request that came round a loop of proxies), as that method writes it.
  private func record(
    refusal status: Int, reason: String, _ extraFields: [(String, String)], of request: URLRequest,
    kind: SessionEvent.TaskKind
  ) {
    guard let url = request.url else { return }
    let body = Data((reason + "\n").utf8)
    let fields = ResponseEncoder.textFields(
      byteCount: body.count, request: nil, keepsAlive: false, extraFields: extraFields)
    guard
      let response = HTTPURLResponse(
        url: url, statusCode: status, httpVersion: "HTTP/1.1",
        headerFields: Dictionary(fields, uniquingKeysWith: { _, last in last }))
    else { return }
    handler.refused(request, kind: kind, with: response, body: body)
  }

  /// Answers a malformed or over-limit request with `status`, then closes lingeringly: reads
  /// and discards what the client is still sending (bounded in bytes and time) so that it
  /// receives the status instead of a connection reset.
  private func reject(status: Int, reason: String, extraFields: [(String, String)] = []) {
    reject(
      writing: ResponseEncoder.encodeText(
        status: status, text: reason + "\n", request: nil, keepsAlive: false,
        extraFields: extraFields))
  }

  /// Answers an admin request whose body is over ``ServerLimits/maxAdminBodyBytes`` with `413`
  /// and WireMock's error document, then closes lingeringly, as ``reject(status:reason:extraFields:)``.
  private func rejectAdminBody() {
    let body = AdminJSON.data(
      AdminJSON.errors(
        code: 413, title: "Request body too large",
        detail: "The admin API reads bodies of at most \(limits.maxAdminBodyBytes) bytes "
          + "(ServerLimits.maxAdminBodyBytes); split the import, or start the server with a "
          + "larger limit."))
    var fields = [("Content-Type", "application/json"), ("Content-Length", String(body.count))]
    fields.append(("Connection", "close"))
    var bytes = ResponseEncoder.head(status: 413, fields: fields)
    bytes.append(contentsOf: body)
    reject(writing: bytes)
  }

  /// Writes `bytes`, an answer to a request the server refused, then closes lingeringly.
  private func reject(writing bytes: [UInt8]) {
    guard writeAll(bytes) else { return }
    Socket.shutdownWrite(fd)
    let end = Self.now() + Self.nanoseconds(limits.lingerTimeout)
    var discarded = 0
    var scratch = [UInt8](repeating: 0, count: 16 * 1024)
    while discarded < limits.lingerBytes, !isStopping {
      let now = Self.now()
      guard now < end else { return }
      let ready = Socket.poll(
        [(fd, Int16(POLLIN)), (wake.readDescriptor, Int16(POLLIN))],
        timeout: Int32(clamping: (end - now) / 1_000_000 + 1))
      if ready[1] != 0 { wake.drain() }
      guard ready[0] != 0 else { continue }
      switch scratch.withUnsafeMutableBytes({ Socket.receive(fd, into: $0) }) {
      case .closed: return
      case .wouldBlock: continue
      case .bytes(let count): discarded += count
      }
    }
  }

  // MARK: - Requests

  /// The request the mock sees: `http://HOST:PORT/path?query` (the server's own base URL),
  /// with the method, every header as sent (the `Host` header kept) and the body.
  static func urlRequest(for request: HTTPRequest, baseURL: String) -> URLRequest? {
    var names = HeaderNames()
    return urlRequest(for: request, baseURL: baseURL, names: &names)
  }

  /// The request as the mock sees it; `names` keeps the spellings of header names the
  /// connection has seen, since a client sends the same ones again and again.
  static func urlRequest(for request: HTTPRequest, baseURL: String, names: inout HeaderNames)
    -> URLRequest?
  {
    guard let url = URL(string: baseURL + request.pathAndQuery) else { return nil }
    var urlRequest = URLRequest(url: url)
    // Foundation's setters are slow (each normalizes and validates): a GET is the default.
    if request.method != "GET" { urlRequest.httpMethod = request.method }
    #if canImport(FoundationNetworking)
      // What corelibs' `addValue(_:forHTTPHeaderField:)` does per header, at once: names are
      // stored `capitalized`, repeated names (in any case) joined with commas under the first,
      // values with NUL, CR or LF dropped (the parser has refused those already).
      var fields: [String: String] = [:]
      for (name, value) in request.headers
      where !HTTPRequest.sameName(name, "Transfer-Encoding")
        && !value.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 })
      {
        let key = names.stored(name)
        fields[key] = fields[key].map { $0 + "," + value } ?? value
      }
      if !fields.isEmpty { urlRequest.allHTTPHeaderFields = fields }
    #else
      for (name, value) in request.headers
      where !HTTPRequest.sameName(name, "Transfer-Encoding") {
        urlRequest.addValue(value, forHTTPHeaderField: name)
      }
    #endif
    if !request.body.isEmpty { urlRequest.httpBody = request.body }
    return urlRequest
  }

}

/// The header names a connection has seen, with the spelling a `URLRequest` stores them in
/// (corelibs' `capitalized`, which costs close to a microsecond a name). At most 64 are kept,
/// so that a client sending ever new names cannot grow it.
struct HeaderNames {
  private var spellings: [String: String] = [:]

  init() {}

  /// `name` as a `URLRequest` stores it.
  mutating func stored(_ name: String) -> String {
    if let known = spellings[name] { return known }
    let spelled = name.capitalized
    if spellings.count < 64 { spellings[name] = spelled }
    return spelled
  }
}
