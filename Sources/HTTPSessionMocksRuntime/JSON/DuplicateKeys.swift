/// What a reader does with a key that an object holds more than once.
enum DuplicateKeys {
  /// An error naming the path: our format, whose files this library writes.
  case refused
  /// The last one counts, as in JavaScript's `JSON.parse` (with which browsers read their HAR
  /// files) and Foundation's `JSONSerialization`: foreign formats.
  case lastWins
}
