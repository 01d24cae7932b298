import Foundation
import Testing

@testable import HTTPSessionMocksRuntime

/// The template parser: what it reads, and where it says a template is wrong.
@Suite struct TemplateParserTests {
  func error(_ template: String) -> TemplateSyntaxError? {
    do {
      _ = try TemplateParser.parse(template)
      return nil
    } catch {
      return error
    }
  }

  @Test func namesTheLineAndColumnOfAnUnclosedBlock() throws {
    let found = try #require(error("line one\n  {{#if request.query.a}}yes"))
    #expect(found.line == 2)
    #expect(found.column == 3)
    #expect(found.reason.contains("{{#if}} is never closed"))
  }

  @Test func namesTheClosingTagThatDoesNotMatch() throws {
    let found = try #require(error("{{#if a}}x{{/each}}"))
    #expect(found.column == 11)
    #expect(found.offset == 10)
    #expect(found.reason.contains("{{/each}} does not close {{#if}}"))
  }

  @Test func namesUnclosedTagsStringsAndSubexpressions() throws {
    #expect(error("ab {{request.path")?.column == 18)
    #expect(
      error("{{jsonPath request.body '$.a}}")?.reason.contains("string is never closed") == true)
    #expect(
      error("{{size (jsonPath request.body '$.a'}}")?.reason.contains("subexpression") == true)
    #expect(error("{{> header}}")?.reason.contains("partials") == true)
    #expect(error("{{!-- never")?.reason.contains("comment is never closed") == true)
    #expect(error("{{else}}")?.reason.contains("outside a block") == true)
  }

  @Test func refusesNestingDeeperThanTheLimit() {
    let deep = String(repeating: "{{#if a}}", count: 100) + String(repeating: "{{/if}}", count: 100)
    #expect(error(deep)?.reason.contains("nest more than") == true)
    let subexpressions =
      "{{size " + String(repeating: "(size ", count: 100) + "1"
      + String(repeating: ")", count: 100) + "}}"
    #expect(error(subexpressions)?.reason.contains("nest more than") == true)
  }

  @Test func readsPathsLiteralsHashesAndBlocks() throws {
    let nodes = try TemplateParser.parse(
      "{{request.pathSegments.[1]}}{{{x}}}{{now offset='-3 days' format=\"yyyy\"}}"
        + "{{#if a}}1{{else if b}}2{{else}}3{{/if}}{{math 1 '+' -2.5}}")
    #expect(nodes.count == 5)
    guard case .output(.path(let path), let escaped, _, _) = nodes[0] else {
      Issue.record("expected a path output, got \(nodes[0])")
      return
    }
    #expect(path.segments == ["request", "pathSegments", "1"])
    #expect(escaped)
    guard case .output(_, false, _, _) = nodes[1] else {
      Issue.record("expected an unescaped output")
      return
    }
    guard case .output(.call(let call), _, _, _) = nodes[2] else {
      Issue.record("expected a helper call")
      return
    }
    #expect(call.hash.map(\.key) == ["offset", "format"])
    guard case .block(let block) = nodes[3], case .block(let chained)? = block.inverse.first else {
      Issue.record("expected {{else if}} to chain a block")
      return
    }
    #expect(chained.call.name.source == "if")
    #expect(!chained.inverse.isEmpty)
  }

  /// Random byte soup made of template pieces never traps (the fuzz target does this at length).
  @Test func neverTrapsOnPiecesOfTemplates() {
    let pieces = [
      "{{", "}}", "{{{", "}}}", "{{#", "{{/", "{{^", "{{else", "(", ")", "'", "\"", "[", "]", "~",
      "=", "..", "/", "@", "!", "--", "a", " ", "\n", "if", "each", "é", "\\",
    ]
    var random = SeededRandom(seed: 30)
    for _ in 0..<3000 {
      var text = ""
      for _ in 0..<random.below(24) { text += pieces[random.below(pieces.count)] }
      _ = error(text)
    }
  }
}
