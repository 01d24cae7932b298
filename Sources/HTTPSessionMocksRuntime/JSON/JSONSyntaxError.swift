/// A JSON syntax error: where it is (a byte offset) and Foundation-style words for what is wrong.
struct JSONSyntaxError: Error {
  let offset: Int
  let reason: String
}
