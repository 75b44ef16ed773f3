import { assert, describe, it } from "@effect/vitest"
import { type GuildMember, matchMember, TargetLookup } from "../../../../src/tools/builtin/blocking/BlockTargetResolver"

const member = (userId: string, username: string, displayName: string): GuildMember => ({
  userId,
  username,
  displayName,
  isBot: false,
  isAdministrator: false
})
const members = [member("10001", "alice", "Alice ✿"), member("10002", "bob", "Sam"), member("10003", "sam", "Samuel")]

describe("matchMember", () => {
  it("mentions and ids first, then exact usernames or display names (no case, no @)", () => {
    assert.deepStrictEqual(matchMember(members, "<@10001>"), TargetLookup.Found({ member: members[0]! }))
    assert.deepStrictEqual(matchMember(members, "<@!10002>"), TargetLookup.Found({ member: members[1]! }))
    assert.deepStrictEqual(matchMember(members, " 10003 "), TargetLookup.Found({ member: members[2]! }))
    assert.deepStrictEqual(matchMember(members, "@ALICE"), TargetLookup.Found({ member: members[0]! }))
    assert.deepStrictEqual(matchMember(members, "alice ✿"), TargetLookup.Found({ member: members[0]! }))
  })

  it("a name two members answer to is ambiguous; unknown names, ids and blanks are not found", () => {
    assert.deepStrictEqual(matchMember(members, "sam"), TargetLookup.Ambiguous({ candidates: [members[1]!, members[2]!] }))
    assert.deepStrictEqual(matchMember(members, "ali"), TargetLookup.NotFound())
    assert.deepStrictEqual(matchMember(members, "<@99999>"), TargetLookup.NotFound())
    assert.deepStrictEqual(matchMember(members, "  "), TargetLookup.NotFound())
  })
})
