import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Ref } from "effect"
import { FunctionCall } from "../../../../src/domain/FunctionCall"
import { ToolCallOutcome } from "../../../../src/domain/ToolCallOutcome"
import { executeToolCall } from "../../../../src/loop/executeToolCall"
import { GuildSettingsStore } from "../../../../src/store/GuildSettingsStore"
import { type MemoryPlace, memoryScopeOf, ShortTermMemoryStore } from "../../../../src/store/ShortTermMemoryStore"
import { StoreError } from "../../../../src/store/StoreError"
import { renderShortTermMemory } from "../../../../src/tools/builtin/memory/renderShortTermMemory"
import {
  MAX_CATEGORY_CHARS,
  makeUpdateShortTermMemoryTool,
  UPDATE_SHORT_TERM_MEMORY
} from "../../../../src/tools/builtin/memory/UpdateShortTermMemoryTool"
import { callInput, makeToolCallHarness, testAttempt } from "../../../support/tools/toolCallHarness"
import { availability, executeIn, memoryStores, toolContext } from "../blocking/toolTestKit"

const place = (channelId: string, parentChannelId?: string): MemoryPlace => ({ guildId: "guild-1", channelId, parentChannelId, userId: "user-1" })
/** The memory of channel-1 of guild-1, where the test ToolContext (and the tool-call harness) is. */
const guildScope = memoryScopeOf(place("channel-1"), false)
const otherChannel = memoryScopeOf(place("channel-2"), false)
const serverScope = memoryScopeOf(place("channel-1"), true)

describe("update_short_term_memory", () => {
  it.effect("declares one optional string parameter per category, memory category, no follow-up", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      assert.strictEqual(tool.name, UPDATE_SHORT_TERM_MEMORY)
      assert.strictEqual(tool.category, "memory")
      assert.strictEqual(tool.requiresFollowUp, false)
      assert.isTrue(tool.oncePerTurn, "one update per reply")
      assert.isTrue(tool.sequential, "two writes in one pass would race")
      assert.isTrue(tool.endsTurnAfterText, "a silent write after the pass's text has nothing to follow up")
      assert.deepStrictEqual(Object.keys(tool.parameters.properties), ["summary", "scene_state"])
      assert.deepStrictEqual(tool.parameters.required, [])
      assert.isFalse(tool.isAvailableFor("novelai"))
      assert.isTrue(tool.isAvailableFor("anthropic"))
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("replaces the whole category map of the channel's memory and persona", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      const store = yield* ShortTermMemoryStore
      const context = yield* toolContext()
      const first = yield* executeIn(tool, { summary: " planning a trip ", scene_state: "kitchen" }, context)
      assert.isTrue(first.success)
      assert.deepStrictEqual(first.data, { status: "short_term_memory_updated", categories: ["summary", "scene_state"] })
      assert.deepStrictEqual(yield* store.get(guildScope, "persona-1"), { summary: "planning a trip", scene_state: "kitchen" })
      // A later turn: categories left out are dropped, unknown keys ignored.
      yield* executeIn(tool, { scene_state: "bedroom", mood: "happy" }, yield* toolContext())
      assert.deepStrictEqual(yield* store.get(guildScope, "persona-1"), { scene_state: "bedroom" })
      assert.deepStrictEqual(yield* store.get(guildScope, undefined), {})
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("[decision 16] the memory is the channel's: another channel and the server slot are untouched; a thread writes its parent's", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      const store = yield* ShortTermMemoryStore
      yield* executeIn(tool, { summary: "moderators: ban the spammer" }, yield* toolContext())
      assert.deepStrictEqual(yield* store.get(guildScope, "persona-1"), { summary: "moderators: ban the spammer" })
      assert.deepStrictEqual(yield* store.get(otherChannel, "persona-1"), {})
      assert.deepStrictEqual(yield* store.get(serverScope, "persona-1"), {})
      // A thread of channel-2 (the front put the parent in the turn state): channel-2's memory.
      const inThread = yield* toolContext({ channelId: "thread-7", parentChannelId: "channel-2" })
      yield* executeIn(tool, { summary: "thread of channel-2" }, inThread)
      assert.deepStrictEqual(yield* store.get(otherChannel, "persona-1"), { summary: "thread of channel-2" })
      assert.deepStrictEqual(yield* store.get(memoryScopeOf(place("thread-7"), false), "persona-1"), {})
      assert.deepStrictEqual(yield* store.get(guildScope, "persona-1"), { summary: "moderators: ban the spammer" })
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("[decision 16] with server_wide_memory on, every channel writes the server's one memory", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      const store = yield* ShortTermMemoryStore
      yield* (yield* GuildSettingsStore).setCapability("guild-1", "server_wide_memory", true)
      yield* executeIn(tool, { summary: "one for all" }, yield* toolContext({ channelId: "channel-2" }))
      assert.deepStrictEqual(yield* store.get(serverScope, "persona-1"), { summary: "one for all" })
      assert.deepStrictEqual(yield* store.get(otherChannel, "persona-1"), {})
      // Another guild is not affected by this guild's setting.
      yield* executeIn(tool, { summary: "guild-2 channel" }, yield* toolContext({ guildId: "guild-2" }))
      assert.deepStrictEqual(
        yield* store.get(memoryScopeOf({ ...place("channel-1"), guildId: "guild-2" }, false), "persona-1"),
        { summary: "guild-2 channel" }
      )
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("a failed server_wide_memory lookup writes nowhere and tells the model (never a guess at the scope)", () =>
    Effect.gen(function* () {
      const store = yield* ShortTermMemoryStore
      const brokenSettings = Layer.succeed(GuildSettingsStore, {
        get: () => Effect.die("unused"),
        setCapability: () => Effect.die("unused"),
        isEnabled: () =>
          Effect.fail(new StoreError({ store: "GuildSettingsStore", operation: "isEnabled", reason: "storage", detail: "disk on fire" }))
      })
      const tool = yield* Effect.provide(makeUpdateShortTermMemoryTool(), brokenSettings)
      const error = yield* Effect.flip(executeIn(tool, { summary: "x" }, yield* toolContext()))
      assert.include(error.userMessage ?? "", "could not be saved")
      assert.strictEqual(error.error, "a storage error")
      assert.include(error.detail ?? "", "disk on fire", "the store's words are kept for operators")
      assert.deepStrictEqual(yield* store.get(guildScope, "persona-1"), {})
      assert.deepStrictEqual(yield* store.get(serverScope, "persona-1"), {})
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("a DM writes the DM scope of the user", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      const store = yield* ShortTermMemoryStore
      yield* executeIn(tool, { summary: "dm talk" }, yield* toolContext({ guildId: undefined, isDM: true }))
      const dm = memoryScopeOf({ guildId: undefined, channelId: "channel-1", parentChannelId: undefined, userId: "user-1" }, false)
      assert.deepStrictEqual(yield* store.get(dm, "persona-1"), { summary: "dm talk" })
      assert.deepStrictEqual(yield* store.get(guildScope, "persona-1"), {})
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("no non-blank category is refused and nothing is written; long text is cut", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      const store = yield* ShortTermMemoryStore
      yield* store.replace(guildScope, "persona-1", { summary: "kept" })
      const empty = yield* executeIn(tool, { summary: "   " }, yield* toolContext())
      assert.isFalse(empty.success)
      assert.include(empty.error ?? "", "at least one category")
      assert.deepStrictEqual(yield* store.get(guildScope, "persona-1"), { summary: "kept" })
      const long = yield* executeIn(tool, { summary: "x".repeat(MAX_CATEGORY_CHARS + 10) }, yield* toolContext())
      assert.isTrue(long.success)
      assert.strictEqual((yield* store.get(guildScope, "persona-1"))["summary"]?.length, MAX_CATEGORY_CHARS)
      assert.deepStrictEqual(long.data, {
        status: "short_term_memory_updated",
        categories: ["summary"],
        truncated_to_chars: MAX_CATEGORY_CHARS,
        truncated: ["summary"]
      })
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("[32] through executeToolCall: the first success spends the tool; a second call this turn is not run", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      const store = yield* ShortTermMemoryStore
      const h = yield* makeToolCallHarness({ tools: [tool] })
      const call = (summary: string) =>
        h.run(executeToolCall({ ...callInput({ name: UPDATE_SHORT_TERM_MEMORY, args: { summary } }), iteration: 0, attempt: testAttempt }))
      const first = yield* call("first")
      assert.isTrue(ToolCallOutcome.$is("History")(first) && first.success)
      assert.deepStrictEqual((yield* Ref.get(h.state.flags)).spentOncePerTurnTools, [UPDATE_SHORT_TERM_MEMORY])
      const declared = yield* h.registry.toolsForTurn(availability({ guildId: "guild-1" }, yield* Ref.get(h.state.flags)))
      assert.notInclude(declared.map((declaredTool) => declaredTool.name), UPDATE_SHORT_TERM_MEMORY)
      const second = yield* call("second")
      assert.isTrue(ToolCallOutcome.$is("History")(second) && !second.success)
      assert.deepStrictEqual(yield* store.get(guildScope, undefined), { summary: "first" })
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("[26] a truncated call never reaches the store (the partial map would wipe the rest)", () =>
    Effect.gen(function* () {
      const tool = yield* makeUpdateShortTermMemoryTool()
      const store = yield* ShortTermMemoryStore
      yield* store.replace(guildScope, undefined, { summary: "long story", scene_state: "kitchen" })
      const h = yield* makeToolCallHarness({ tools: [tool] })
      const outcome = yield* h.run(
        executeToolCall({
          ...callInput(FunctionCall({ name: UPDATE_SHORT_TERM_MEMORY, args: { scene_state: "bedroom" }, argumentsTruncated: true })),
          iteration: 0,
          attempt: testAttempt
        })
      )
      assert.isTrue(ToolCallOutcome.$is("History")(outcome) && !outcome.success)
      assert.deepStrictEqual(yield* store.get(guildScope, undefined), { summary: "long story", scene_state: "kitchen" })
    }).pipe(Effect.provide(memoryStores))
  )

  it.effect("a storage failure becomes a failed result for the model, never a loop failure", () =>
    Effect.gen(function* () {
      const brokenStore = Layer.succeed(ShortTermMemoryStore, {
        get: () => Effect.succeed({}),
        replace: () =>
          Effect.fail(new StoreError({ store: "ShortTermMemoryStore", operation: "replace", reason: "storage", detail: "disk full" }))
      })
      const tool = yield* makeUpdateShortTermMemoryTool().pipe(Effect.provide(brokenStore), Effect.provide(memoryStores))
      const h = yield* makeToolCallHarness({ tools: [tool] })
      const outcome = yield* h.run(
        executeToolCall({ ...callInput({ name: UPDATE_SHORT_TERM_MEMORY, args: { summary: "x" } }), iteration: 0, attempt: testAttempt })
      )
      assert.isTrue(ToolCallOutcome.$is("History")(outcome) && !outcome.success)
      assert.include(JSON.stringify(ToolCallOutcome.$is("History")(outcome) && outcome.historyEntry), "could not be saved")
      // A failed update does not use up the turn's one update.
      assert.deepStrictEqual((yield* Ref.get(h.state.flags)).spentOncePerTurnTools, [])
    })
  )

  it.effect("custom categories must be valid parameter names", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(makeUpdateShortTermMemoryTool([{ name: "Bad Name", description: "x" }]))
      assert.isTrue(Exit.isFailure(exit))
      const custom = yield* makeUpdateShortTermMemoryTool([{ name: "quest_log", description: "Open quests" }])
      assert.deepStrictEqual(Object.keys(custom.parameters.properties), ["quest_log"])
    }).pipe(Effect.provide(memoryStores))
  )
})

describe("renderShortTermMemory", () => {
  it("lists configured categories first, then any others; nothing to show ⇒ undefined", () => {
    assert.isUndefined(renderShortTermMemory({}))
    assert.isUndefined(renderShortTermMemory({ summary: "  " }))
    const text = renderShortTermMemory({ old_slot: "kept", scene_state: "kitchen", summary: "trip" })
    assert.deepStrictEqual(text?.split("\n").slice(1), ["summary: trip", "scene_state: kitchen", "old_slot: kept"])
    assert.include(text ?? "", "update_short_term_memory")
  })
})

