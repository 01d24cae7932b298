/// One member of a parsed object.
struct JSONMember {
  let key: String
  let value: JSONNode
}
