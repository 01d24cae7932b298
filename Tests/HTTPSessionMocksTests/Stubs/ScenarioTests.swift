import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite struct ScenarioTests {
  @Test func mockStartsInTheInitialState() {
    #expect(URLSessionMock.initialScenarioState == "started")
    #expect(URLSessionMock().scenarioState == "started")
  }

  @Test func loginFlipsLoggedOutToLoggedIn() {
    let mock = URLSessionMock()
    mock.stub(.get("/me"), with: .status(401)).whenState("started")
    let login = mock.stub(.post("/login"), with: .status(200)).willSetState("logged in")
    mock.stub(.get("/me"), with: .text("octocat")).whenState("logged in")

    #expect(route(mock, "GET", "https://e.com/me").status == 401)
    #expect(mock.scenarioState == "started")
    #expect(route(mock, "POST", "https://e.com/login").status == 200)
    #expect(mock.scenarioState == "logged in")
    let me = route(mock, "GET", "https://e.com/me")
    #expect(me.status == 200)
    #expect(me.text == "octocat")
    #expect(login.callCount == 1)
  }

  @Test func jobMovesFromQueuedToRunningToDone() {
    let mock = URLSessionMock()
    mock.stub(.post("/jobs"), with: .status(202)).willSetState("queued")
    mock.stub(.get("/jobs/{id}"), with: .text("queued")).whenState("queued")
      .willSetState("running")
    mock.stub(.get("/jobs/{id}"), with: .text("running")).whenState("running")
      .willSetState("done")
    mock.stub(.get("/jobs/{id}"), with: .text("done")).whenState("done")

    #expect(route(mock, "POST", "https://e.com/jobs").status == 202)
    var seen: [String] = []
    for _ in 0..<4 { seen.append(route(mock, "GET", "https://e.com/jobs/7").text ?? "error") }
    #expect(seen == ["queued", "running", "done", "done"])
    #expect(mock.scenarioState == "done")
  }

  @Test func stateCanBeSetDirectly() {
    let mock = URLSessionMock()
    mock.stub(.get("/status"), with: .text("healthy"))
    mock.stub(.get("/status"), with: .text("maintenance")).whenState("maintenance")
    #expect(route(mock, "GET", "https://e.com/status").text == "healthy")
    mock.scenarioState = "maintenance"
    #expect(route(mock, "GET", "https://e.com/status").text == "maintenance")
    mock.scenarioState = URLSessionMock.initialScenarioState
    #expect(route(mock, "GET", "https://e.com/status").text == "healthy")
  }

  @Test func stubWithoutStateAnswersInEveryState() {
    let mock = URLSessionMock()
    mock.stub(.get("/ping"), with: .status(204))
    for state in ["started", "logged in", "anything"] {
      mock.scenarioState = state
      #expect(route(mock, "GET", "https://e.com/ping").status == 204)
    }
  }

  @Test func stateMovesOnlyWhenTheStubAnswers() {
    let mock = URLSessionMock()
    mock.stub(.any, with: .status(404))
    mock.stub(.post("/logout"), with: .status(200)).whenState("logged in")
      .willSetState("logged out")
    #expect(route(mock, "POST", "https://e.com/logout").status == 404)
    #expect(mock.scenarioState == "started")
    mock.scenarioState = "logged in"
    #expect(route(mock, "POST", "https://e.com/logout").status == 200)
    #expect(mock.scenarioState == "logged out")
  }

  @Test func stubInAnotherStateIsNamedInTheUnmatchedReport() {
    let mock = URLSessionMock()
    mock.stub(.get("/me"), with: .status(200)).whenState("logged in")
    expectReport {
      #expect(route(mock, "GET", "https://e.com/me").urlErrorCode == .resourceUnavailable)
    } matching: { report in
      report.message.contains(
        "matches, but it answers in state \"logged in\", and the mock is in \"started\"")
    }
  }

  @Test func namedScenariosAreIndependentAndStartInStarted() {
    let mock = URLSessionMock()
    mock.stub(.get("/cart"), with: .text("empty")).inScenario("cart").whenState("Started")
    mock.stub(.post("/cart"), with: .status(201)).inScenario("cart").willSetState("full")
    mock.stub(.get("/cart"), with: .text("1 item")).inScenario("cart").whenState("full")
    mock.stub(.get("/me"), with: .status(401)).inScenario("login").whenState("Started")
    mock.stub(.get("/me"), with: .status(200)).inScenario("login").whenState("in")

    #expect(URLSessionMock.initialNamedScenarioState == "Started")
    #expect(mock.scenarioState(of: "cart") == "Started")
    #expect(route(mock, "GET", "https://e.com/cart").text == "empty")
    #expect(route(mock, "POST", "https://e.com/cart").status == 201)
    #expect(mock.scenarioState(of: "cart") == "full")
    #expect(route(mock, "GET", "https://e.com/cart").text == "1 item")
    // Moving "cart" moved neither "login" nor the default scenario.
    #expect(mock.scenarioState(of: "login") == "Started")
    #expect(mock.scenarioState == URLSessionMock.initialScenarioState)
    #expect(route(mock, "GET", "https://e.com/me").status == 401)
    #expect(mock.scenarioNames == ["cart", "login"])
  }

  @Test func aNamedScenarioCanBeSetAndAllReset() {
    let mock = URLSessionMock()
    mock.stub(.get("/me"), with: .status(401)).inScenario("login").whenState("Started")
    mock.stub(.get("/me"), with: .status(200)).inScenario("login").whenState("in")
    mock.setScenarioState("in", of: "login")
    mock.scenarioState = "elsewhere"
    #expect(route(mock, "GET", "https://e.com/me").status == 200)
    mock.resetScenarios()
    #expect(mock.scenarioState(of: "login") == "Started")
    #expect(mock.scenarioState == URLSessionMock.initialScenarioState)
    #expect(route(mock, "GET", "https://e.com/me").status == 401)
  }

  @Test func aStubOfANamedScenarioInAnotherStateIsNamedInTheReport() {
    let mock = URLSessionMock()
    mock.stub(.get("/cart"), with: .status(200)).inScenario("cart").whenState("full")
    expectReport {
      #expect(route(mock, "GET", "https://e.com/cart").urlErrorCode == .resourceUnavailable)
    } matching: { report in
      report.message.contains(
        "it answers in state \"full\" of scenario \"cart\", which is in \"Started\"")
    }
  }
}
