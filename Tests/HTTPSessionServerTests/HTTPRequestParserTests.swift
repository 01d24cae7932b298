import Foundation
import HTTPSessionServer
import Testing

@Suite struct HTTPRequestParserTests {
  private func parse(
    _ text: String, maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int = 1024
  ) -> [HTTPRequestParser.Step] {
    parse(Array(text.utf8), maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes)
  }

  /// Every step up to the first failure, or a final `needMore` if the input ends mid-request.
  private func parse(
    _ bytes: [UInt8], maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int = 1024
  ) -> [HTTPRequestParser.Step] {
    var parser = HTTPRequestParser(maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes)
    parser.append(bytes)
    var steps: [HTTPRequestParser.Step] = []
    while true {
      let step = parser.next()
      if case .needMore = step {
        if !parser.isIdle { steps.append(step) }
        return steps
      }
      steps.append(step)
      if case .failure = step { return steps }
    }
  }

  private func failure(_ text: String, maxBodyBytes: Int = 1024) -> HTTPParseError? {
    if case .failure(let error)? = parse(text, maxBodyBytes: maxBodyBytes).last { return error }
    return nil
  }

  private func request(_ text: String) -> HTTPRequest? {
    if case .request(let request)? = parse(text).first { return request }
    return nil
  }

  // MARK: - Requests it accepts

  @Test func readsARequestLineHeadersAndNoBody() throws {
    let parsed = try #require(
      request("GET /users/octocat?x=1 HTTP/1.1\r\nHost: a\r\nX-A:  b \r\n\r\n"))
    #expect(parsed.method == "GET")
    #expect(parsed.target == "/users/octocat?x=1")
    #expect(parsed.minorVersion == 1)
    #expect(parsed.value(of: "host") == "a")
    #expect(parsed.value(of: "X-A") == "b")
    #expect(parsed.body.isEmpty)
    #expect(parsed.keepsAlive)
  }

  @Test func readsABodyByContentLength() throws {
    let parsed = try #require(
      request("POST /items HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"))
    #expect(parsed.body == Data("hello".utf8))
  }

  @Test func decodesAChunkedBodyWithExtensionsAndTrailers() throws {
    let parsed = try #require(
      request(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
          + "5;name=value\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: t\r\n\r\n"))
    #expect(parsed.body == Data("hello, world!!!".utf8))
  }

  @Test func answersPipelinedRequestsInOrder() {
    let steps = parse("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
    let targets = steps.compactMap { step -> String? in
      if case .request(let request) = step { return request.target }
      return nil
    }
    #expect(targets == ["/a", "/b"])
  }

  @Test func givesTheSameRequestsWhenBytesArriveOneByOne() {
    let text =
      "\r\nPOST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
      + "GET /b HTTP/1.0\r\n\r\n"
    var parser = HTTPRequestParser()
    var targets: [String] = []
    for byte in text.utf8 {
      parser.append([byte])
      while case .request(let request) = parser.next() { targets.append(request.target) }
    }
    #expect(targets == ["/a", "/b"])
  }

  /// Fuzzing found two inputs whose answer depended on how the bytes were split into reads: a
  /// CR at the end of one read before an empty line, and a NUL in a trailer past the limit.
  @Test func answersTheSameWholeOrByteByByte() {
    let trailer =
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
      + String(repeating: "a", count: 50) + "\0" + String(repeating: "a", count: 200)
      + "\r\n\r\n"
    for text in ["\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", trailer] {
      let bytes = Array(text.utf8)
      var split = HTTPRequestParser(maxHeadBytes: 150, maxBodyBytes: 100)
      var splitSteps: [HTTPRequestParser.Step] = []
      for byte in bytes {
        split.append([byte])
        var step = split.next()
        while step != .needMore {
          splitSteps.append(step)
          if case .failure = step { break }
          step = split.next()
        }
        if case .failure? = splitSteps.last { break }
      }
      let whole = parse(bytes, maxHeadBytes: 150, maxBodyBytes: 100)
      #expect(whole.filter { $0 != .needMore } == splitSteps, "\(text.prefix(20))")
    }
  }

  @Test func reportsAPendingHeadForExpectContinue() {
    var parser = HTTPRequestParser()
    parser.append(
      Array("PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
    #expect(parser.next() == .needMore)
    #expect(parser.pendingHead?.expectsContinue == true)
    parser.append(Array("abc".utf8))
    guard case .request(let request) = parser.next() else {
      Issue.record("no request")
      return
    }
    #expect(request.body == Data("abc".utf8))
  }

  @Test func keepsAliveByVersionAndConnectionHeader() throws {
    #expect(try #require(request("GET / HTTP/1.0\r\n\r\n")).keepsAlive == false)
    #expect(try #require(request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")).keepsAlive)
    #expect(
      try #require(request("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")).keepsAlive
        == false)
  }

  @Test func takesThePathOfAnAbsoluteTarget() throws {
    let parsed = try #require(
      request("GET http://example.com:8080/p?q=1 HTTP/1.1\r\nHost: a\r\n\r\n"))
    #expect(parsed.pathAndQuery == "/p?q=1")
  }

  @Test func acceptsTheSameContentLengthTwice() throws {
    let parsed = try #require(
      request("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi"))
    #expect(parsed.body == Data("hi".utf8))
  }

  @Test func waitsForTheRestOfAnIncompleteRequest() {
    #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n") == [.needMore])
    #expect(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nabc") == [.needMore])
  }

  // MARK: - The Robustness list: each is refused with its status

  @Test func refusesABadRequestLine() {
    #expect(failure("GARBAGE\r\n\r\n") == .badRequestLine)
    #expect(failure("GET  / HTTP/1.1\r\nHost: a\r\n\r\n") == .badRequestLine)
    #expect(failure("GET /\r\nHost: a\r\n\r\n") == .badRequestLine)
    #expect(failure("GET nopath HTTP/1.1\r\nHost: a\r\n\r\n") == .invalidTarget)
  }

  @Test func refusesAnUnknownVersion() {
    #expect(failure("GET / HTTP/2.0\r\nHost: a\r\n\r\n") == .unsupportedVersion)
    #expect(failure("GET / HTTP/1.2\r\nHost: a\r\n\r\n") == .unsupportedVersion)
    #expect(failure("GET / HTCPCP/1.0\r\nHost: a\r\n\r\n") == .badRequestLine)
  }

  @Test func refusesAHeaderLineWithoutAColon() {
    #expect(failure("GET / HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n") == .headerWithoutColon)
  }

  @Test func refusesObsoleteLineFolding() {
    #expect(
      failure("GET / HTTP/1.1\r\nHost: a\r\nX-A: one\r\n two\r\n\r\n") == .obsoleteLineFolding)
  }

  @Test func refusesWhitespaceBeforeTheColon() {
    #expect(failure("GET / HTTP/1.1\r\nHost : a\r\n\r\n") == .invalidHeaderName)
  }

  @Test func refusesABareLineFeed() {
    #expect(failure("GET / HTTP/1.1\nHost: a\n\n") == .bareLineFeed)
    #expect(failure("GET / HTTP/1.1\r\nHost: a\n\r\n") == .bareLineFeed)
  }

  @Test func refusesANulByte() {
    #expect(failure("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n") == .nulByte)
  }

  @Test func refusesControlCharactersInAValue() {
    #expect(failure("GET / HTTP/1.1\r\nHost: a\u{7}b\r\n\r\n") == .invalidHeaderValue)
  }

  @Test func refusesNonASCIIInTheMethod() {
    #expect(failure("GÉT / HTTP/1.1\r\nHost: a\r\n\r\n") == .invalidMethod)
  }

  @Test func refusesAContentLengthThatIsNotANumber() {
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5x\r\n\r\n") == .invalidContentLength)
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n") == .invalidContentLength)
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n") == .invalidContentLength)
  }

  @Test func refusesTwoDifferentContentLengths() {
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
        == .conflictingContentLengths)
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\nhello!")
        == .conflictingContentLengths)
  }

  @Test func refusesContentLengthWithChunkedAsSmuggling() {
    #expect(
      failure(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
      )
        == .contentLengthWithTransferEncoding)
  }

  @Test func refusesTransferCodingsItCannotDecode() {
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
        == .unsupportedTransferEncoding)
    #expect(
      failure("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n")
        == .unsupportedTransferEncoding)
  }

  @Test func refusesMalformedChunkSizes() {
    let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    #expect(failure(head + "ZZ\r\nhello\r\n0\r\n\r\n") == .invalidChunk)
    #expect(failure(head + "\r\n") == .invalidChunk)
    #expect(failure(head + "-5\r\nhello\r\n0\r\n\r\n") == .invalidChunk)
    #expect(failure(head + "5\nhello\r\n0\r\n\r\n") == .invalidChunk)
    #expect(failure(head + "5\r\nhelloX\r\n0\r\n\r\n") == .invalidChunk)
    #expect(failure(head + "ffffffffffffffffffff\r\n") == .invalidChunk)
  }

  @Test func refusesAnHTTP11RequestWithoutOneHost() {
    #expect(failure("GET / HTTP/1.1\r\n\r\n") == .missingHost)
    #expect(failure("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == .missingHost)
  }

  @Test func refusesAHeadOverTheLimitWith431() {
    let text = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: \(String(repeating: "a", count: 200))\r\n\r\n"
    let steps = parse(text, maxHeadBytes: 100)
    #expect(steps == [.failure(.headTooLarge)])
    #expect(HTTPParseError.headTooLarge.status == 431)
    // A head that never ends is refused as soon as it passes the limit.
    #expect(
      parse("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 200), maxHeadBytes: 100)
        == [.failure(.headTooLarge)])
  }

  @Test func refusesABodyOverTheLimitWith413() {
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", maxBodyBytes: 10)
        == .bodyTooLarge)
    #expect(
      failure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n")
        == .bodyTooLarge)
    #expect(
      failure(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\n",
        maxBodyBytes: 10) == .bodyTooLarge)
    #expect(HTTPParseError.bodyTooLarge.status == 413)
  }

  @Test func keepsFailingAfterAFailure() {
    var parser = HTTPRequestParser()
    parser.append(Array("GARBAGE\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
    #expect(parser.next() == .failure(.badRequestLine))
    #expect(parser.next() == .failure(.badRequestLine))
  }

  @Test func mapsEveryMalformedRequestTo400() {
    let malformed: [HTTPParseError] = [
      .badRequestLine, .invalidMethod, .invalidTarget, .unsupportedVersion, .headerWithoutColon,
      .obsoleteLineFolding, .invalidHeaderName, .invalidHeaderValue, .bareLineFeed, .nulByte,
      .missingHost, .invalidContentLength, .conflictingContentLengths,
      .contentLengthWithTransferEncoding, .unsupportedTransferEncoding, .invalidChunk,
    ]
    #expect(malformed.allSatisfy { $0.status == 400 && !$0.reason.isEmpty })
  }
}
