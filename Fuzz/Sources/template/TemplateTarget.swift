import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The Handlebars template parser and renderer behind response templating, on arbitrary
// templates.
//
// Input: the template. Checked: parsing returns nodes or a TemplateSyntaxError whose reason is
// not empty and whose line, column and offset lie in the template, never a crash; a template that
// parses renders against a fixed request (a JSON body, repeated query parameters, headers) or
// fails with a message, within the output and step limits given, and never traps; where the
// template compiles (CompiledTemplate), the compiled form renders the same text.

/// One input for libFuzzer: a template.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let text = String(decoding: Data(bytes: start, count: count), as: UTF8.self)
  let nodes: [TemplateNode]
  do {
    nodes = try TemplateParser.parse(text)
  } catch {
    check(!error.reason.isEmpty, "a syntax error with no reason")
    check(error.line >= 1 && error.column >= 1, "a position before the start: \(error)")
    check(error.offset >= 0 && error.offset <= text.utf8.count, "an offset outside: \(error)")
    return 0
  }
  var request = URLRequest(url: URL(string: "https://api.test/a/b%20c/7?q=1&q=2&r=%3C")!)
  request.httpMethod = "POST"
  request.setValue("42", forHTTPHeaderField: "X-Id")
  request.setValue("c=v", forHTTPHeaderField: "Cookie")
  request.httpBody = Data(#"{"id": 7, "tags": ["a", "b"], "o": {"k": [1, 2.5, null, true]}}"#.utf8)
  var environment = TemplateEnvironment(
    now: Date(timeIntervalSince1970: 1_700_000_000), random: SeededRandom(seed: 1),
    maxOutputBytes: 1 << 16, maxSteps: 20_000)
  do {
    let output = try TemplateRenderer.render(
      nodes, context: TemplateRequestModel.context(for: request), environment: &environment)
    check(output.utf8.count <= 1 << 16, "the output passed the limit: \(output.utf8.count)")
    // A template that compiles renders the same text straight from the request, or leaves it
    // to the renderer.
    if let template = CompiledTemplate(nodes),
      let bytes = template.render(for: request, maxOutputBytes: 1 << 16)
    {
      let compiled = String(decoding: bytes, as: UTF8.self)
      check(compiled == output, "compiled: \(compiled), rendered: \(output)")
      // Handed what routing read of the request, the same bytes.
      let sent = template.render(for: request, sent: RequestFacts(request), maxOutputBytes: 1 << 16)
      check(
        sent == bytes,
        "compiled with routing's reads: \(sent.map { String(decoding: $0, as: UTF8.self) } ?? "nil")"
      )
    }
  } catch {
    check(!error.message.isEmpty, "a render error with no message")
    let compiled = CompiledTemplate(nodes)?.render(for: request, maxOutputBytes: 1 << 16)
    check(compiled == nil, "compiled a template the renderer refuses: \(error.message)")
  }
  return 0
}
