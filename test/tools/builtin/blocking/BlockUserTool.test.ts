import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { GuildSettingsStore } from "../../../../src/store/GuildSettingsStore"
import { PersonaBlockStore } from "../../../../src/store/PersonaBlockStore"
import { BlockTargetResolver, type GuildMember } from "../../../../src/tools/builtin/blocking/BlockTargetResolver"
import { BLOCK_USER, makeBlockUserTool } from "../../../../src/tools/builtin/blocking/BlockUserTool"
import { mayTrigger } from "../../../../src/tools/builtin/blocking/blockedUserContext"
import { makeUnblockUserTool, UNBLOCK_USER } from "../../../../src/tools/builtin/blocking/UnblockUserTool"
import { assembled, availability, executeIn, memoryStores, toolContext } from "./toolTestKit"

const HOUR = 3_600_000
const member = (userId: string, username: string, displayName: string, extra: Partial<GuildMember> = {}): GuildMember => ({
  userId,
  username,
  displayName,
  isBot: false,
  isAdministrator: false,
  ...extra
})
const alice = member("10001", "alice", "Alice")
const bob = member("10002", "bob", "Bobby")
const twinA = member("10003", "sam1", "Sam")
const twinB = member("10004", "sam2", "Sam")
const botSelf = member("90000", "loopcord", "Loopcord", { isBot: true })
const admin = member("10005", "owner", "Owner", { isAdministrator: true })

const resolver = BlockTargetResolver.fromMembers({ "guild-1": [alice, bob, twinA, twinB, botSelf, admin] })
const services = Layer.merge(memoryStores, resolver)

const enableBlocking = Effect.flatMap(GuildSettingsStore, (settings) => settings.setCapability("guild-1", "user_blocking_enabled", true))

const blockArgs = (user: string, extra: Record<string, unknown> = {}) => ({
  user,
  block_type: "block",
  duration_hours: 2,
  reason: "keeps spamming",
  ...extra
})

describe("block_user / unblock_user capability gating", () => {
  it.effect("hidden while user_blocking_enabled is off (the default), exposed once an admin enables it", () =>
    Effect.gen(function* () {
      const block = yield* makeBlockUserTool
      const unblock = yield* makeUnblockUserTool
      assert.isNull(yield* assembled(block, availability()))
      assert.isNull(yield* assembled(unblock, availability()))
      yield* enableBlocking
      assert.strictEqual((yield* assembled(block, availability()))?.name, BLOCK_USER)
      assert.strictEqual((yield* assembled(unblock, availability()))?.name, UNBLOCK_USER)
      // Never in DMs, whatever the guild settings.
      assert.isFalse(block.isAvailableForContext?.(availability({ guildId: undefined })))
      assert.isNull(yield* assembled(block, availability({ guildId: undefined })))
    }).pipe(Effect.provide(services))
  )

  it.effect("both run one at a time in a pass (a block and an unblock of one user land in the model's order)", () =>
    Effect.gen(function* () {
      assert.isTrue((yield* makeBlockUserTool).sequential)
      assert.isTrue((yield* makeUnblockUserTool).sequential)
    }).pipe(Effect.provide(services))
  )

  it.effect("a call that slips through while the capability is off is refused and blocks nobody", () =>
    Effect.gen(function* () {
      const block = yield* makeBlockUserTool
      const blocks = yield* PersonaBlockStore
      const result = yield* executeIn(block, blockArgs("alice"), yield* toolContext())
      assert.isFalse(result.success)
      assert.include(result.error ?? "", "turned off")
      assert.deepStrictEqual(yield* blocks.activeBlocks("guild-1", "persona-1"), [])
    }).pipe(Effect.provide(services))
  )
})

describe("block_user", () => {
  it.effect("block: stored for this persona with expiry on the Clock; it lapses after the hours", () =>
    Effect.gen(function* () {
      yield* enableBlocking
      const block = yield* makeBlockUserTool
      const blocks = yield* PersonaBlockStore
      yield* TestClock.setTime(0)
      const result = yield* executeIn(block, blockArgs("<@10001>"), yield* toolContext())
      assert.isTrue(result.success, result.error)
      assert.deepStrictEqual(result.data, {
        status: "user_blocked",
        user: "Alice",
        block_type: "block",
        duration_hours: 2,
        expires_at: new Date(2 * HOUR).toISOString()
      })
      const active = yield* blocks.activeBlocks("guild-1", "persona-1")
      assert.deepStrictEqual(
        active.map((stored) => [stored.userId, stored.userName, stored.mode, stored.reason, stored.blockedBy, stored.expiresAt]),
        [["10001", "Alice", "block", "keeps spamming", "user-1", 2 * HOUR]]
      )
      // Persona-scoped: another persona in the same guild is unaffected.
      assert.deepStrictEqual(yield* blocks.activeBlocks("guild-1", "persona-2"), [])
      assert.isFalse(mayTrigger(active, "10001", 0))
      yield* TestClock.adjust(2 * HOUR)
      assert.deepStrictEqual(yield* blocks.activeBlocks("guild-1", "persona-1"), [])
      assert.isTrue(mayTrigger(active, "10001", 2 * HOUR))
    }).pipe(Effect.provide(services))
  )

  it.effect("mute by display name; the triggering user may be muted too", () =>
    Effect.gen(function* () {
      yield* enableBlocking
      const block = yield* makeBlockUserTool
      const blocks = yield* PersonaBlockStore
      const result = yield* executeIn(
        block,
        blockArgs("bobby", { block_type: "mute", duration_hours: 720 }),
        yield* toolContext({ userId: "10002" })
      )
      assert.isTrue(result.success, result.error)
      assert.strictEqual((result.data as { status: string }).status, "user_muted")
      const stored = yield* blocks.activeBlock("guild-1", "persona-1", "10002")
      assert.isTrue(Option.isSome(stored) && stored.value.mode === "mute" && stored.value.expiresAt === 720 * HOUR)
    }).pipe(Effect.provide(services))
  )

  it.effect("bots (the bot itself too) and server administrators are never blocked", () =>
    Effect.gen(function* () {
      yield* enableBlocking
      const block = yield* makeBlockUserTool
      const blocks = yield* PersonaBlockStore
      const selfResult = yield* executeIn(block, blockArgs("loopcord"), yield* toolContext())
      assert.include(selfResult.error ?? "", "Bots cannot")
      const adminResult = yield* executeIn(block, blockArgs("<@10005>"), yield* toolContext({ userId: "10005" }))
      assert.include(adminResult.error ?? "", "administrator")
      assert.deepStrictEqual(yield* blocks.activeBlocks("guild-1", "persona-1"), [])
    }).pipe(Effect.provide(services))
  )

  it.effect("bad hours, an empty reason, unknown or ambiguous users, DMs and impersonation are refused", () =>
    Effect.gen(function* () {
      yield* enableBlocking
      const block = yield* makeBlockUserTool
      const blocks = yield* PersonaBlockStore
      const context = yield* toolContext()
      for (const hours of [0, 721, 1.5, -3]) {
        const result = yield* executeIn(block, blockArgs("alice", { duration_hours: hours }), context)
        assert.include(result.error ?? "", "from 1 to 720", String(hours))
      }
      assert.include((yield* executeIn(block, blockArgs("alice", { reason: "  " }), context)).error ?? "", "reason")
      assert.include((yield* executeIn(block, blockArgs("carol"), context)).error ?? "", "No member")
      const ambiguous = yield* executeIn(block, blockArgs("Sam"), context)
      assert.include(ambiguous.error ?? "", "<@10003>")
      assert.include(ambiguous.error ?? "", "<@10004>")
      assert.include((yield* executeIn(block, blockArgs("alice", { block_type: "ban" }), context)).error ?? "", "Invalid arguments")
      const dm = yield* executeIn(block, blockArgs("alice"), yield* toolContext({ guildId: undefined, isDM: true }))
      assert.include(dm.error ?? "", "direct messages")
      const impersonated = yield* executeIn(block, blockArgs("alice"), yield* toolContext({ isUserImpersonation: true }))
      assert.include(impersonated.error ?? "", "speaks through the persona")
      assert.deepStrictEqual(yield* blocks.activeBlocks("guild-1", "persona-1"), [])
    }).pipe(Effect.provide(services))
  )
})

describe("unblock_user", () => {
  it.effect("lifts this persona's block; a second unblock says the user is not blocked", () =>
    Effect.gen(function* () {
      yield* enableBlocking
      const block = yield* makeBlockUserTool
      const unblock = yield* makeUnblockUserTool
      const blocks = yield* PersonaBlockStore
      const context = yield* toolContext()
      yield* executeIn(block, blockArgs("alice"), context)
      const lifted = yield* executeIn(unblock, { user: "Alice" }, context)
      assert.deepStrictEqual(lifted.data, { status: "user_unblocked", user: "Alice", previous_block_type: "block" })
      assert.deepStrictEqual(yield* blocks.activeBlocks("guild-1", "persona-1"), [])
      const again = yield* executeIn(unblock, { user: "alice" }, context)
      assert.include(again.error ?? "", "not muted or blocked")
    }).pipe(Effect.provide(services))
  )

  it.effect("a member who left the server is found by the stored name or id", () =>
    Effect.gen(function* () {
      yield* enableBlocking
      const blocks = yield* PersonaBlockStore
      const unblock = yield* makeUnblockUserTool
      for (const [userId, userName, query] of [["20001", "Gone Gary", "gone gary"], ["20002", "Left Lee", "<@20002>"]] as const) {
        yield* blocks.block({ guildId: "guild-1", personaId: "persona-1", userId, userName, mode: "mute", hours: 3 })
        const lifted = yield* executeIn(unblock, { user: query }, yield* toolContext())
        assert.isTrue(lifted.success, lifted.error)
        assert.deepStrictEqual(yield* blocks.activeBlock("guild-1", "persona-1", userId), Option.none())
      }
    }).pipe(Effect.provide(services))
  )

  it.effect("another persona's block is not lifted", () =>
    Effect.gen(function* () {
      yield* enableBlocking
      const blocks = yield* PersonaBlockStore
      const unblock = yield* makeUnblockUserTool
      yield* blocks.block({ guildId: "guild-1", personaId: "persona-2", userId: "10001", userName: "Alice", mode: "block", hours: 3 })
      const result = yield* executeIn(unblock, { user: "alice" }, yield* toolContext())
      assert.isFalse(result.success)
      assert.isTrue(Option.isSome(yield* blocks.activeBlock("guild-1", "persona-2", "10001")))
    }).pipe(Effect.provide(services))
  )
})
