/// What a reader does with a key that an object holds more than once.
enum DuplicateKeys {
  /// An error naming the path: our format, whose files this library writes.
  case refused
  /// The last one counts, as in JavaScript's `JSON.parse` (with which browsers read their HAR
  /// files) and Foundation's `JSONSerialization`: foreign formats.
  case lastWins
  /// The first one counts, as Foundation's `JSONDecoder` reads a document (measured on Swift
  /// 6.3.1): documents that ``JSONValue/init(parsing:)`` reads (request bodies, JSON bodies of
  /// stubs), which `JSONDecoder` read before the package's parser did.
  case firstWins
}
