import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct StubTests {
  // MARK: - Which stub answers

  @Test func latestRegisteredMatchingStubWins() {
    let mock = URLSessionMock()
    mock.stub(.get("/users/{login}"), with: .status(200))
    mock.stub(.get("/users/octocat"), with: .status(201))
    #expect(route(mock, "GET", "https://e.com/users/octocat").status == 201)
    #expect(route(mock, "GET", "https://e.com/users/ada").status == 200)

    mock.stub(.get("/users/{login}"), with: .status(202))
    #expect(route(mock, "GET", "https://e.com/users/octocat").status == 202)
  }

  @Test func latestStubWinsAcrossIndexedAndScannedStubs() {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .status(200))
    mock.stub(.regex("/a$"), with: .status(201))
    #expect(route(mock, "GET", "https://e.com/a").status == 201)
    mock.stub(.get("/a"), with: .status(202))
    #expect(route(mock, "GET", "https://e.com/a").status == 202)
    mock.stub(.any, with: .status(203))
    #expect(route(mock, "GET", "https://e.com/a").status == 203)
  }

  @Test func newerStubThatDoesNotMatchLeavesTheOlderOne() {
    let mock = URLSessionMock()
    mock.stub(.get("https://a.example.com/x"), with: .status(200))
    mock.stub(.get("https://b.example.com/x"), with: .status(201))
    mock.stub(.post("/x"), with: .status(202))
    #expect(route(mock, "GET", "https://a.example.com/x").status == 200)
    #expect(route(mock, "GET", "https://b.example.com/x").status == 201)
    #expect(route(mock, "POST", "https://a.example.com/x").status == 202)
  }

  @Test func routingAmongAThousandStubsFindsTheRightOne() {
    let mock = URLSessionMock()
    for number in 0..<1_000 {
      mock.stub(.get("/items/\(number)"), with: .text("item \(number)"))
      mock.stub(.delete("/items/\(number)"), with: .status(204))
    }
    mock.stub(.get("/items/{id}/owner"), with: .text("owner"))
    #expect(route(mock, "GET", "https://e.com/items/0").text == "item 0")
    #expect(route(mock, "GET", "https://e.com/items/517").text == "item 517")
    #expect(route(mock, "GET", "https://e.com/items/999").text == "item 999")
    #expect(route(mock, "DELETE", "https://e.com/items/517").status == 204)
    #expect(route(mock, "GET", "https://e.com/items/517/owner").text == "owner")
    expectReport(containing: "No stub matches GET https://e.com/items/1000") {
      #expect(route(mock, "GET", "https://e.com/items/1000").urlErrorCode == .resourceUnavailable)
    }
  }

  @Test func catchAllInitialiserIsOverriddenByLaterStubs() {
    let mock = URLSessionMock(data: Data("default".utf8), response: nil, error: nil)
    mock.stub(.get("/special"), with: .text("special"))
    #expect(route(mock, "GET", "https://e.com/special").text == "special")
    #expect(route(mock, "GET", "https://e.com/other").text == "default")
    #expect(route(mock, "POST", "https://e.com/special").text == "default")
  }

  // MARK: - times, callCount, remove

  @Test func timesLimitsAnswersThenFallsThroughToOlderStub() {
    let mock = URLSessionMock()
    mock.stub(.get("/token"), with: .status(200))
    let limited = mock.stub(.get("/token"), with: .status(201)).times(2)
    #expect(route(mock, "GET", "https://e.com/token").status == 201)
    #expect(route(mock, "GET", "https://e.com/token").status == 201)
    #expect(route(mock, "GET", "https://e.com/token").status == 200)
    #expect(limited.callCount == 2)
  }

  @Test func exhaustedStubWithNothingOlderLeavesTheRequestUnmatched() {
    let mock = URLSessionMock()
    mock.stub(.get("/once"), with: .status(200)).times(1)
    #expect(route(mock, "GET", "https://e.com/once").status == 200)
    expectReport {
      let answer = route(mock, "GET", "https://e.com/once")
      #expect(answer.urlErrorCode == .resourceUnavailable)
    } matching: { report in
      report.message.contains("matches, but it has answered its 1 time (.times(1))")
    }
  }

  @Test func timesZeroOrBelowNeverAnswers() {
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(200))
    let zero = mock.stub(.get("/a"), with: .status(500)).times(0)
    let negative = mock.stub(.get("/a"), with: .status(501)).times(-3)
    #expect(route(mock, "GET", "https://e.com/a").status == 200)
    #expect(zero.callCount == 0)
    #expect(negative.callCount == 0)
  }

  @Test func callCountCountsOnlyTheRequestsThisStubAnswered() {
    let mock = URLSessionMock()
    let users = mock.stub(.get("/users/{login}"), with: .status(200))
    let repos = mock.stub(.get("/repos/{name}"), with: .status(200))
    #expect(users.callCount == 0)
    route(mock, "GET", "https://e.com/users/a")
    route(mock, "GET", "https://e.com/users/b")
    route(mock, "GET", "https://e.com/repos/c")
    #expect(users.callCount == 2)
    #expect(repos.callCount == 1)
  }

  @Test func removedStubStopsAnsweringAndKeepsItsCallCount() {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .status(200))
    let override = mock.stub(.get("/a"), with: .status(201))
    #expect(route(mock, "GET", "https://e.com/a").status == 201)
    override.remove()
    #expect(route(mock, "GET", "https://e.com/a").status == 200)
    #expect(override.callCount == 1)
    override.remove()
    #expect(route(mock, "GET", "https://e.com/a").status == 200)
  }

  @Test func removedStubIsNotReportedAsUnused() {
    let mock = URLSessionMock()
    mock.stub(.get("/removed"), with: .status(200)).remove()
    #expect(mock.verifyAllStubsUsed())
  }

  @Test func handleDoesNotKeepItsMockAliveAndOutlivesIt() {
    var mock: URLSessionMock? = URLSessionMock()
    weak let released = mock
    let stub = mock?.stub(.get("/a"), with: .status(200))
    mock = nil
    #expect(released == nil)
    #expect(stub?.times(3).callCount == 0)
    stub?.remove()
    #expect(stub?.description.hasPrefix("GET /a (registered at ") == true)
  }

  @Test func removeAllStubsLeavesNoneAndNewStubsWork() {
    let mock = URLSessionMock()
    let old = mock.stub(.get("/a"), with: .status(200))
    route(mock, "GET", "https://e.com/a")
    mock.removeAllStubs()
    expectReport {
      #expect(route(mock, "GET", "https://e.com/a").urlErrorCode == .resourceUnavailable)
    } matching: { report in
      report.message.contains("The mock has no stubs")
    }
    #expect(old.callCount == 1)
    mock.stub(.get("/a"), with: .status(204))
    #expect(route(mock, "GET", "https://e.com/a").status == 204)
    #expect(mock.verifyAllStubsUsed())
  }

  @Test func removedStubsAreGoneFromRoutingAndReports() {
    let mock = URLSessionMock()
    for _ in 0..<1_000 {
      mock.stub(.get("/a"), with: .status(500)).remove()
      mock.stub(.get("/a/{id}"), with: .status(500)).remove()
    }
    mock.stub(.get("/a"), with: .status(200))
    #expect(route(mock, "GET", "https://e.com/a").status == 200)
    // What a removed stub left behind is visible in the near-miss report: only live stubs.
    expectReport {
      _ = route(mock, "GET", "https://e.com/b")
    } matching: { report in
      let text = report.message
      return text.contains("1. GET /a (registered at") && !text.contains("2. ")
    }
  }

  @Test func aStubsCapturesAreReleasedOutsideTheMocksLock() {
    let mock = URLSessionMock()
    let witness = DeinitWitness { _ = mock.scenarioState }  // would deadlock under the lock
    let stub = mock.stub(.get("/x")) { [witness] _ in
      withExtendedLifetime(witness) {}
      return .status(200)
    }
    stub.remove()
    mock.stub(.get("/y")) { [witness] _ in
      withExtendedLifetime(witness) {}
      return .status(200)
    }
    mock.removeAllStubs()
    #expect(mock.scenarioState == URLSessionMock.initialScenarioState)
  }

  @Test func stubDescriptionNamesMatcherAndRegistrationSite() {
    let mock = URLSessionMock()
    let line = #line + 1
    let stub = mock.stub(.get("/users/{login}"), with: .status(200))
    #expect(stub.matcher.description == "GET /users/{login}")
    #expect(
      stub.description
        == "GET /users/{login} (registered at HTTPSessionMocksTests/StubTests.swift:\(line))")
  }

  // MARK: - Sequences

  @Test func sequencePlaysInOrderAndTheLastKeepsAnswering() {
    let mock = URLSessionMock()
    let stub = mock.stub(
      .get("/flaky"),
      with: [.error(URLError(.networkConnectionLost)), .status(503), .text("ok")])
    #expect(route(mock, "GET", "https://e.com/flaky").urlErrorCode == .networkConnectionLost)
    #expect(route(mock, "GET", "https://e.com/flaky").status == 503)
    #expect(route(mock, "GET", "https://e.com/flaky").text == "ok")
    #expect(route(mock, "GET", "https://e.com/flaky").text == "ok")
    #expect(route(mock, "GET", "https://e.com/flaky").text == "ok")
    #expect(stub.callCount == 5)
  }

  @Test func sequenceWithTimesFallsThroughAfterItsLimit() {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .status(200))
    mock.stub(.get("/a"), with: [.status(500), .status(502), .status(503)]).times(2)
    #expect(route(mock, "GET", "https://e.com/a").status == 500)
    #expect(route(mock, "GET", "https://e.com/a").status == 502)
    #expect(route(mock, "GET", "https://e.com/a").status == 200)
  }

  @Test func emptyResponseListIsReportedWhenRegisteredAndWhenUsed() {
    let mock = URLSessionMock()
    let line = #line + 2
    expectReport {
      mock.stub(.get("/empty"), with: [])
    } matching: { report in
      report.message.contains("The stub for GET /empty was given an empty list of responses")
        && report.line == line
    }
    expectReport {
      let answer = route(mock, "GET", "https://e.com/empty")
      #expect(answer.urlErrorCode == .resourceUnavailable)
      #expect(answer.response == nil)
    } matching: { report in
      report.message.contains(
        "cannot answer GET https://e.com/empty: The stub has no responses")
    }
  }

  // MARK: - Dynamic responses

  @Test func closureBuildsAResponseForEachRequest() {
    let mock = URLSessionMock()
    mock.stub(.post("/echo")) { request in
      .data(request.httpBody ?? Data(), status: 202)
    }
    let first = route(mock, "POST", "https://e.com/echo", body: Data("ping".utf8))
    let second = route(mock, "POST", "https://e.com/echo", body: Data("pong".utf8))
    #expect(first.text == "ping")
    #expect(first.status == 202)
    #expect(second.text == "pong")
  }

  @Test func closureWithParametersGetsTheNamedValues() {
    let mock = URLSessionMock()
    mock.stub(.post("https://api.example.com/repos/{owner}/{repo}/issues")) {
      request, parameters in
      .json(
        [
          "owner": parameters["owner"] ?? "", "repo": parameters["repo"] ?? "",
          "method": request.httpMethod ?? "",
        ], status: 201)
    }
    let answer = route(mock, "POST", "https://api.example.com/repos/apple/swift/issues")
    #expect(answer.status == 201)
    let decoded = try? JSONDecoder().decode([String: String].self, from: answer.data ?? Data())
    #expect(decoded == ["owner": "apple", "repo": "swift", "method": "POST"])
  }

  @Test func closureWithParametersGetsNoneFromAMatcherWithoutParameters() {
    let mock = URLSessionMock()
    mock.stub(.regex("/status$")) { _, parameters in .text("\(parameters.count)") }
    #expect(route(mock, "GET", "https://e.com/status").text == "0")
  }

  @Test func closureIsNotCalledForRequestsItDoesNotMatch() {
    let mock = URLSessionMock()
    let calls = Shared(0)
    mock.stub(.any, with: .status(404))
    mock.stub(.get("/dynamic")) { _ in
      calls.withLock { $0 += 1 }
      return .status(200)
    }
    #expect(route(mock, "GET", "https://e.com/other").status == 404)
    #expect(calls.current == 0)
    #expect(route(mock, "GET", "https://e.com/dynamic").status == 200)
    #expect(calls.current == 1)
  }
}

/// Runs `onDeinit` when it is released.
private final class DeinitWitness: Sendable {
  let onDeinit: @Sendable () -> Void
  init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
  deinit { onDeinit() }
}

extension StubTests {
  // MARK: - Priority

  @Test func aLowerPriorityWinsThenTheNewest() {
    let mock = URLSessionMock()
    mock.stub(.get("/p/special"), with: .text("specific")).priority(1)
    mock.stub(.url("/p/{any}"), with: .text("general"))
    mock.stub(.any, with: .text("fallback")).priority(10)
    #expect(route(mock, "GET", "https://e.com/p/special").text == "specific")
    #expect(route(mock, "GET", "https://e.com/p/other").text == "general")
    #expect(route(mock, "GET", "https://e.com/elsewhere").text == "fallback")
    // Among equal priorities, the newest answers.
    mock.stub(.get("/p/special"), with: .text("newer")).priority(1)
    #expect(route(mock, "GET", "https://e.com/p/special").text == "newer")
  }

  @Test func aStubWithoutPriorityHasWireMocksDefaultOfFive() {
    let mock = URLSessionMock()
    mock.stub(.get("/a"), with: .text("four")).priority(4)
    mock.stub(.get("/a"), with: .text("default"))
    mock.stub(.get("/b"), with: .text("default"))
    mock.stub(.get("/b"), with: .text("six")).priority(6)
    #expect(route(mock, "GET", "https://e.com/a").text == "four")
    #expect(route(mock, "GET", "https://e.com/b").text == "default")
  }

  @Test func priorityHoldsForMatchersThatRunTheTestsCode() {
    let mock = URLSessionMock()
    mock.stub(RequestMatcher("any") { _ in true }, with: .text("closure")).priority(1)
    mock.stub(.get("/a"), with: .text("newer"))
    #expect(route(mock, "GET", "https://e.com/a").text == "closure")
  }
}
