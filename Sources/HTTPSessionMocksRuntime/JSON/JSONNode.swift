/// A value of a parsed file, as the bundle readers walk it: numbers keep the text they were
/// written as, objects keep their members in file order (duplicates included), and a string that
/// is not text is kept as the reason it is not, so that only a value the reader uses can fail.
enum JSONNode {
  case null
  case bool(Bool)
  /// The literal as written (`200`, `-1`, `1e999`), turned into a number when read.
  case number(String)
  case string(String)
  case array([JSONNode])
  /// Members in file order; a key may appear more than once (the reader's rule decides).
  case object([JSONMember])
  /// A string that is not text (invalid UTF-8, a lone surrogate): why, and where. Reading it
  /// fails; a reader that skips it never sees the problem.
  case unreadable(JSONFlaw)
}
