import Foundation

/// Reads GitHub's pagination header:
/// `Link: <https://api.github.com/user/1/repos?page=2>; rel="next", <…?page=5>; rel="last"`.
enum LinkHeader {
  /// The URL whose `rel` parameter names `relation`, or `nil` if the header has none.
  static func url(for relation: String, in header: String?) -> URL? {
    guard let header else { return nil }
    for entry in header.split(separator: ",") {
      let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let target = parts.first, target.hasPrefix("<"), target.hasSuffix(">") else {
        continue
      }
      let isWanted = parts.dropFirst().contains { parameter in
        let pair = parameter.split(separator: "=", maxSplits: 1).map {
          $0.trimmingCharacters(in: .whitespaces)
        }
        guard pair.count == 2, pair[0] == "rel" else { return false }
        let quotes = CharacterSet(charactersIn: "\"")
        return pair[1].trimmingCharacters(in: quotes).split(separator: " ").contains {
          $0 == relation
        }
      }
      if isWanted { return URL(string: String(target.dropFirst().dropLast())) }
    }
    return nil
  }
}
