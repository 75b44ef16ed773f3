import { assert, describe, it } from "@effect/vitest"
import { ChatMessage } from "../../../../src/domain/ChatMessage"
import type { PersonaUserBlock } from "../../../../src/store/PersonaBlockStore"
import {
  applyBlockedUserNotices,
  blockedMessageIds,
  blockedUserNotice,
  mayTrigger
} from "../../../../src/tools/builtin/blocking/blockedUserContext"

const HOUR = 3_600_000
const block = (userId: string, userName: string, mode: "mute" | "block", expiresAt: number): PersonaUserBlock => ({
  guildId: "g",
  personaId: "p",
  userId,
  userName,
  mode,
  reason: undefined,
  blockedBy: undefined,
  createdAt: 0,
  expiresAt
})

const authors = new Map([
  ["m1", "alice"],
  ["m2", "alice"],
  ["m3", "alice"],
  ["m4", "bob"],
  ["m5", "alice"],
  ["m6", "carol"]
])
const authorOf = (message: ChatMessage) => (message.messageId === undefined ? undefined : authors.get(message.messageId))
const user = (messageId: string, name: string, content: string, images: ReadonlyArray<{ url: string }> = []) =>
  ChatMessage({ role: "user", name, content, messageId, ...(images.length === 0 ? {} : { images }) })

const history = [
  ChatMessage({ role: "system", content: "You are Loopcord." }),
  user("m1", "Alice", "hey", [{ url: "https://cdn.example/a.png" }]),
  user("m2", "Alice", "hey!!"),
  user("m3", "Alice", "answer me"),
  user("m4", "Bob", "leave her alone"),
  ChatMessage({ role: "assistant", content: "I'm here, Bob." }),
  user("m5", "Alice", "again"),
  user("m6", "Carol", "hi all")
]

describe("blocked-user context notice", () => {
  it("a block replaces each run of the user's messages (text and media) by one notice", () => {
    const now = 0.5 * HOUR
    const result = applyBlockedUserNotices(history, [block("alice", "Alice (stored)", "block", 3 * HOUR)], { now, authorOf })
    const notice =
      "[System: Alice sent a message but is currently blocked by you for 3 more hours. Use `unblock_user` to unblock if needed]"
    assert.deepStrictEqual(result, [
      history[0]!,
      { role: "system", content: notice },
      history[4]!,
      history[5]!,
      { role: "system", content: notice },
      history[7]!
    ])
    assert.notInclude(JSON.stringify(result), "cdn.example")
    assert.deepStrictEqual(blockedMessageIds(history, [block("alice", "Alice", "block", 3 * HOUR)], { now, authorOf }), new Set(["m1", "m2", "m3", "m5"]))
  })

  it("a mute, an expired block, or a block of someone else leaves the context unchanged", () => {
    const now = 10 * HOUR
    assert.deepStrictEqual(applyBlockedUserNotices(history, [block("alice", "Alice", "mute", 20 * HOUR)], { now, authorOf }), history)
    assert.deepStrictEqual(applyBlockedUserNotices(history, [block("alice", "Alice", "block", now)], { now, authorOf }), history)
    assert.deepStrictEqual(applyBlockedUserNotices(history, [block("dave", "Dave", "block", 20 * HOUR)], { now, authorOf }), history)
  })

  it("two blocked users in a row get one notice each; the stored name is used when the message has none", () => {
    const messages = [
      ChatMessage({ role: "user", content: "a", messageId: "m1" }),
      user("m4", "Bob", "b"),
      user("m4", "Bob", "b2")
    ]
    const result = applyBlockedUserNotices(
      messages,
      [block("alice", "Alice Stored", "block", 2 * HOUR), block("bob", "Bob", "block", 1 * HOUR)],
      { now: 0, authorOf }
    )
    assert.deepStrictEqual(result.map((message) => message.content), [
      "[System: Alice Stored sent a message but is currently blocked by you for 2 more hours. Use `unblock_user` to unblock if needed]",
      "[System: Bob sent a message but is currently blocked by you for 1 more hour. Use `unblock_user` to unblock if needed]"
    ])
  })

  it("hours round up and never read 0", () => {
    assert.include(blockedUserNotice("A", block("a", "A", "block", HOUR * 2 + 1), 0), "for 3 more hours")
    assert.include(blockedUserNotice("A", block("a", "A", "block", 60_000), 0), "for 1 more hour.")
  })

  it("mayTrigger: mute and block both stop a user from triggering until they expire", () => {
    const blocks = [block("alice", "Alice", "mute", HOUR), block("bob", "Bob", "block", 2 * HOUR)]
    assert.isFalse(mayTrigger(blocks, "alice", 0))
    assert.isFalse(mayTrigger(blocks, "bob", HOUR))
    assert.isTrue(mayTrigger(blocks, "alice", HOUR))
    assert.isTrue(mayTrigger(blocks, "carol", 0))
  })
})
