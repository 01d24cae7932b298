import Foundation
import HTTPSessionKit
import HTTPSessionMocks
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Value patterns as WireMock 2.35.1 applies them (each case measured against it).
@Suite struct ValuePatternTests {
  @Test func stringPatternsTestTheWholeValue() {
    #expect(ValuePattern.equalTo("abc").matches("abc"))
    #expect(!ValuePattern.equalTo("abc").matches("ABC"))
    #expect(ValuePattern.equalTo("AbC", caseInsensitive: true).matches("abc"))
    #expect(ValuePattern.contains("json").matches("application/json"))
    #expect(ValuePattern.matches("a.c").matches("abc"))
    #expect(!ValuePattern.matches("a.c").matches("xabcx"))
    #expect(ValuePattern.doesNotMatch("a.*").matches("b"))
    #expect(ValuePattern.doesNotContain("a").matches("b"))
  }

  @Test func aMissingValueMatchesOnlyAbsentAndTheNegations() {
    #expect(ValuePattern.absent.matches(nil))
    #expect(!ValuePattern.absent.matches(""))
    #expect(ValuePattern.doesNotMatch("a.*").matches(nil))
    #expect(ValuePattern.doesNotContain("a").matches(nil))
    #expect(!ValuePattern.equalTo("").matches(nil))
    #expect(!ValuePattern.contains("").matches(nil))
  }

  @Test func andAndOrCombine() {
    let both = ValuePattern.contains("a") && .contains("b")
    #expect(both.matches("ab"))
    #expect(!both.matches("a"))
    #expect((ValuePattern.equalTo("x") || .equalTo("y")).matches("y"))
  }

  @Test func equalToJSONComparesValuesWithItsOptions() {
    #expect(ValuePattern.equalToJSON(#"{"a": 1}"#).matches(#"{"a": 1.0}"#))
    #expect(!ValuePattern.equalToJSON(#"{"a": 1}"#).matches(#"{"a": 1, "b": 2}"#))
    let extra = ValuePattern.equalToJSON(#"{"a": [1, 2]}"#, ignoringExtraElements: true)
    #expect(extra.matches(#"{"a": [1, 2, 3], "b": 1}"#))
    #expect(!extra.matches(#"{"a": [2, 1]}"#))
    let order = ValuePattern.equalToJSON(#"{"a": [1, 2]}"#, ignoringArrayOrder: true)
    #expect(order.matches(#"{"a": [2, 1]}"#))
    #expect(!order.matches(#"{"a": [2, 1, 3]}"#))
    let both = ValuePattern.equalToJSON(
      #"{"a": [1, 2]}"#, ignoringArrayOrder: true, ignoringExtraElements: true)
    #expect(both.matches(#"{"a": [3, 2, 1]}"#))
    #expect(both.matches(#"{"a": [1, 3, 2]}"#))
  }

  @Test func jsonUnitPlaceholdersAreOn() {
    let pattern = ValuePattern.equalToJSON(
      #"{"id": "${json-unit.any-number}", "s": "${json-unit.any-string}", "r": "${json-unit.regex}[a-z]+", "i": "${json-unit.ignore}", "b": "${json-unit.any-boolean}"}"#
    )
    #expect(pattern.matches(#"{"id": 3, "s": "x", "r": "abc", "i": [1], "b": false}"#))
    #expect(!pattern.matches(#"{"id": 3, "s": "x", "r": "abc", "b": false}"#))
    #expect(!pattern.matches(#"{"id": "3", "s": "x", "r": "abc", "i": 1, "b": false}"#))
    #expect(!pattern.matches(#"{"id": 3, "s": "x", "r": "ABC", "i": 1, "b": false}"#))
  }

  @Test func matchesJSONPathWithoutAPatternNeedsSomethingThere() {
    let things = ValuePattern.matchesJSONPath("$.things")
    #expect(!things.matches(#"{"things": []}"#))
    #expect(!things.matches(#"{"things": {}}"#))
    #expect(!things.matches(#"{"things": null}"#))
    #expect(things.matches(#"{"things": 0}"#))
    #expect(things.matches(#"{"things": false}"#))
    #expect(!things.matches("not json"))
  }

  @Test func matchesJSONPathReadsTheCommonSubset() {
    let body =
      #"{"store": {"book": [{"sku": "A1", "price": 8}, {"sku": "B2", "price": 12, "tag": "x"}]}, "total": 12, "a.b": 1}"#
    let matching = [
      "$.store.book[0].sku", "$['store']['book'][1]", "$.store.book[-1].tag", "$.store.book[*].sku",
      "$..sku", "$.store.*", "$.store.book[?(@.sku == 'A1')]", "$.store.book[?(@.price > 10)]",
      "$.store.book[?(@.tag)]", "$.store.book[?(@.price < 10 && @.sku == \"A1\")]",
      "$.store.book[?(@.sku =~ /B.*/)]", "$.store.book[0,1]", "$.store.book[0:1]", "$['a.b']",
      "$.store.book[?(@.price >= 12 || @.sku == 'none')]", "$.store.book[?(!(@.sku == 'A1'))]",
    ]
    for path in matching {
      #expect(ValuePattern.matchesJSONPath(path).matches(body), "\(path)")
    }
    let missing = [
      "$.store.book[5]", "$.nothing", "$.store.book[?(@.sku == 'Z9')]", "$.total.deeper",
      "$.store.book[?(@.missing)]",
    ]
    for path in missing {
      #expect(!ValuePattern.matchesJSONPath(path).matches(body), "\(path)")
    }
  }

  @Test func matchesJSONPathWithAPatternTestsTheSelectedValue() {
    #expect(ValuePattern.matchesJSONPath("$.total", .equalTo("12")).matches(#"{"total": 12}"#))
    #expect(ValuePattern.matchesJSONPath("$.total", .equalTo("12")).matches(#"{"total": "12"}"#))
    #expect(!ValuePattern.matchesJSONPath("$.total", .equalTo("12")).matches(#"{"total": 13}"#))
    #expect(
      ValuePattern.matchesJSONPath("$.items[*].sku", .equalTo("A1"))
        .matches(#"{"items": [{"sku": "B"}, {"sku": "A1"}]}"#))
    #expect(
      ValuePattern.matchesJSONPath("$.o", .equalToJSON(#"{"a": 1}"#)).matches(#"{"o": {"a": 1.0}}"#)
    )
    #expect(ValuePattern.matchesJSONPath("$.o", .contains(#""a""#)).matches(#"{"o": {"a": 1}}"#))
    #expect(ValuePattern.matchesJSONPath("$.n", .absent).matches(#"{"o": 1}"#))
    #expect(!ValuePattern.matchesJSONPath("$.n", .absent).matches(#"{"n": 1}"#))
  }

  @Test func malformedPatternsNeverMatchAndSayWhy() {
    for pattern in [
      ValuePattern.matches("("), .doesNotMatch("[a-"), .equalToJSON("{nope"),
      .matchesJSONPath("store.book"), .matchesJSONPath("$.a[?(@.b == )]"), .matchesJSONPath("$["),
      .matchesJSONPath("$.a.length()"),
    ] {
      #expect(!pattern.problems.isEmpty, "\(pattern)")
      #expect(!pattern.matches("{}"), "\(pattern)")
    }
    let matcher = RequestMatcher.get("/a").header("X", .matches("("))
    #expect(matcher.problems.count == 1)
  }

  @Test func deepNestingIsRefusedRatherThanRecursedInto() {
    let deep = "$.a[?(" + String(repeating: "!", count: 5_000) + "@.b)]"
    #expect(!ValuePattern.matchesJSONPath(deep).problems.isEmpty)
    let long = "$" + String(repeating: ".a", count: 3_000)
    #expect(!ValuePattern.matchesJSONPath(long).problems.isEmpty)
  }

  @Test func requestMatchersTestHeadersQueryCookiesAndBodies() {
    let matcher = RequestMatcher.post("/pay")
      .header("Accept", .contains("json"))
      .queryParameter("q", .matches("[a-z]+"))
      .cookie("session", .equalTo("s1"))
      .body(.matchesJSONPath("$.total"))
    let good = routingRequest(
      "POST", "https://e.com/pay?q=abc",
      headers: ["Accept": "application/json", "Cookie": "x=1; session=s1"],
      body: Data(#"{"total": 1}"#.utf8))
    #expect(matcher.matches(good))
    var bad = good
    bad.setValue("a=1", forHTTPHeaderField: "Cookie")
    #expect(!matcher.matches(bad))
    #expect(
      RequestMatcher.basicAuth(username: "u", password: "p").matches(
        routingRequest("GET", "https://e.com/", headers: ["Authorization": "Basic dTpw"])))
    #expect(
      matcher
        == RequestMatcher.post("/pay").header("accept", .contains("json"))
        .queryParameter("q", .matches("[a-z]+")).cookie("session", .equalTo("s1"))
        .body(.matchesJSONPath("$.total")))
  }
}
