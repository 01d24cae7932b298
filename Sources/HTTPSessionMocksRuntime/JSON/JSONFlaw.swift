/// Why a value cannot be read, and the byte offset where the trouble is.
struct JSONFlaw {
  let reason: String
  let offset: Int
}
