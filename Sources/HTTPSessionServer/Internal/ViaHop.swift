import Foundation

/// One server's element of the `Via` header (RFC 9110 §7.6.3): `1.1 httpsessionkit-<16 hex
/// digits>`, a pseudonym drawn at random when the server starts.
///
/// The server adds it to every request it sends on (a proxied stub's, a pass-through policy's),
/// after the `Via` the client sent, and a request that arrives already listing it has come
/// round to the server that sent it: a loop (a mapping that proxies to the server itself, or
/// to another that proxies back). The server answers that one `508 Loop Detected` at once,
/// instead of forwarding it again until every hop's time is up.
struct ViaHop: Sendable {
  /// `httpsessionkit-` and 64 random bits in hexadecimal.
  let pseudonym: String

  init() {
    let bits = UInt64.random(in: .min ... .max)
    let hex = String(bits, radix: 16)
    pseudonym = "httpsessionkit-" + String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// The element this server adds: `1.1 httpsessionkit-...`.
  var element: String { "1.1 " + pseudonym }

  /// `existing` (a request's `Via`, if it has one) with this server's element after it.
  func appended(to existing: String?) -> String {
    guard let existing, !existing.allSatisfy({ $0 == " " || $0 == "\t" }) else { return element }
    return existing + ", " + element
  }

  /// Whether any of `values` (the `Via` fields of a request) lists this server: an element
  /// whose received-by part is this pseudonym, in any case.
  func isListed(in values: some Sequence<String>) -> Bool {
    for value in values {
      for element in value.split(separator: ",") {
        let parts = element.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if parts.count >= 2, parts[1].lowercased() == pseudonym { return true }
      }
    }
    return false
  }
}
