import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { ToolCallOutcome } from "../../../src/domain/ToolCallOutcome"
import { deliberateModeOff, type DeliberateToolMode } from "../../../src/domain/DeliberateToolMode"
import { executeToolCall } from "../../../src/loop/executeToolCall"
import {
  applyDeliberateAllowlist,
  type DeliberatePlanInput,
  planDeliberateToolMode
} from "../../../src/tools/deliberate/planDeliberateToolMode"
import type { Tool } from "../../../src/tools/Tool"
import { callInput, makeToolCallHarness, testAttempt } from "../../support/tools/toolCallHarness"
import { makeRecordingTool } from "../../support/tools/testTools"

const candidates = [
  { name: "web_search", triggerPatterns: [/\b(?:search|look\s+up)\b/gi] },
  { name: "fetch_url", triggerPatterns: [/https?:\/\/\S+/i] },
  { name: "block_user", triggerPatterns: [/\b(?:block|mute)\b/i] },
  { name: "update_short_term_memory" }
]

const plan = (messageText: string, overrides: Partial<DeliberatePlanInput> = {}): DeliberateToolMode =>
  planDeliberateToolMode({ enabled: true, messageText, tools: candidates, retained: [], contextTurns: 3, ...overrides })

describe("planDeliberateToolMode", () => {
  it("off (the default for guilds, always in DMs) ⇒ no allowlist at all", () => {
    assert.deepStrictEqual(plan("please search the web", { enabled: false }), deliberateModeOff)
  })

  it("trigger phrases open the allowlist and name the phrase that did it", () => {
    const mode = plan("Can you LOOK UP the weather and then search again?")
    assert.isTrue(mode.active)
    assert.deepStrictEqual(mode.allowedNames, ["web_search"])
    assert.deepStrictEqual(mode.triggerMatchByToolName.get("web_search"), { trigger: "LOOK UP", source: "built-in" })
    assert.strictEqual(mode.contextTurns, 3)
    assert.isUndefined(mode.disableAllTools)
    // A global regex is stateless across turns.
    assert.deepStrictEqual(plan("search").allowedNames, ["web_search"])
    assert.deepStrictEqual(plan("search").allowedNames, ["web_search"])
    assert.deepStrictEqual(plan("read https://example.com/a and mute him").allowedNames, ["fetch_url", "block_user"])
  })

  it("retained affordances stay allowed without a phrase (\"do it again\")", () => {
    const mode = plan("do it again", { retained: ["web_search", "some_guild_tool"] })
    assert.deepStrictEqual(mode.allowedNames, ["web_search", "some_guild_tool"])
    assert.deepStrictEqual(mode.triggerMatchByToolName.get("web_search")?.source, "retained")
    const both = plan("search more", { retained: ["web_search"] })
    assert.deepStrictEqual(both.triggerMatchByToolName.get("web_search"), { trigger: "search", source: "built-in" })
  })

  it("no intent ⇒ the turn declares no tools (fails closed), though the gate itself never blocks on an empty list", () => {
    const mode = plan("hello there, how are you?")
    assert.deepStrictEqual(mode, {
      active: true,
      allowedNames: [],
      triggerMatchByToolName: new Map(),
      contextTurns: 3,
      disableAllTools: true
    })
    const tools = candidates.map((candidate) => ({ name: candidate.name }))
    assert.deepStrictEqual(applyDeliberateAllowlist(tools, mode), [])
    assert.deepStrictEqual(applyDeliberateAllowlist(tools, plan("search it")), [{ name: "web_search" }])
    assert.deepStrictEqual(applyDeliberateAllowlist(tools, deliberateModeOff), tools)
  })

  it("a guild tool that replaces a built-in answers the built-in's phrases", () => {
    const mode = plan("summarize https://example.com", { replacements: new Map([["fetch_url", ["guild_fetch"]]]) })
    assert.deepStrictEqual(mode.allowedNames, ["fetch_url", "guild_fetch"])
    assert.deepStrictEqual(mode.triggerMatchByToolName.get("guild_fetch"), { trigger: "https://example.com", source: "replacement" })
  })
})

describe("deliberate mode in executeToolCall (planner output drives the gate)", () => {
  const harnessFor = (tools: ReadonlyArray<Tool>, messageText: string, retained: ReadonlyArray<string> = []) =>
    makeToolCallHarness({
      tools,
      turn: {
        deliberate: planDeliberateToolMode({
          enabled: true,
          messageText,
          tools,
          retained,
          contextTurns: 2
        })
      }
    })
  const callIn = (h: Effect.Success<ReturnType<typeof harnessFor>>, name: string) =>
    h.run(executeToolCall({ ...callInput({ name, args: {} }), iteration: 0, attempt: testAttempt }))

  it.effect("[22] [25] a tool the message did not ask for is blocked: not run, no stat, no trigger notice", () =>
    Effect.gen(function* () {
      const search = yield* makeRecordingTool("web_search", undefined, { triggerPatterns: [/\bsearch\b/i] })
      const block = yield* makeRecordingTool("block_user", undefined, { triggerPatterns: [/\bblock\b/i] })
      const h = yield* harnessFor([search.tool, block.tool], "search for cats")
      const outcome = yield* callIn(h, "block_user")
      assert.isTrue(ToolCallOutcome.$is("History")(outcome) && !outcome.success)
      const response = ToolCallOutcome.$is("History")(outcome) ? outcome.historyEntry.functionResponse : undefined
      assert.include(JSON.stringify(response), "blocked_by_deliberate_tool_mode")
      assert.include(JSON.stringify(response), "web_search")
      assert.deepStrictEqual((yield* Ref.get(block.calls)).length, 0)
      assert.strictEqual(yield* h.stats.pending, 0)
      assert.deepStrictEqual(yield* h.thoughtLog.notices.pipe(Effect.map((notices) => notices.filter((notice) => notice.kind === "deliberate_trigger"))), [])
    })
  )

  it.effect("[25] an allowed tool runs, gets its trigger notice, and is retained for the next turns", () =>
    Effect.gen(function* () {
      const search = yield* makeRecordingTool("web_search", undefined, { triggerPatterns: [/\bsearch\b/i] })
      const h = yield* harnessFor([search.tool], "search for cats")
      const outcome = yield* callIn(h, "web_search")
      assert.isTrue(ToolCallOutcome.$is("History")(outcome) && outcome.success)
      assert.strictEqual((yield* Ref.get(search.calls)).length, 1)
      const notices = (yield* h.thoughtLog.notices).filter((notice) => notice.kind === "deliberate_trigger")
      assert.strictEqual(notices.length, 1)
      assert.include(JSON.stringify(notices[0]), "search")
      // Next turn in the channel: "again" names no tool, but the retained affordance keeps it.
      yield* h.affordances.turnEnded(h.turn.channelId)
      const retained = yield* h.affordances.retained(h.turn.channelId)
      const next = planDeliberateToolMode({ enabled: true, messageText: "again please", tools: [search.tool], retained, contextTurns: 2 })
      assert.deepStrictEqual(next.allowedNames, ["web_search"])
      // The window closes after contextTurns more turns.
      yield* h.affordances.turnEnded(h.turn.channelId)
      yield* h.affordances.turnEnded(h.turn.channelId)
      const later = yield* h.affordances.retained(h.turn.channelId)
      assert.isTrue(
        planDeliberateToolMode({ enabled: true, messageText: "again please", tools: [search.tool], retained: later, contextTurns: 2 })
          .disableAllTools
      )
    })
  )

  it.effect("[23] [24] with the mode off, or active with an empty list, the gate blocks nothing", () =>
    Effect.gen(function* () {
      const block = yield* makeRecordingTool("block_user")
      for (const deliberate of [
        deliberateModeOff,
        { ...deliberateModeOff, allowedNames: ["other_tool"] },
        { active: true, allowedNames: [], triggerMatchByToolName: new Map(), contextTurns: 2 }
      ] satisfies ReadonlyArray<DeliberateToolMode>) {
        const h = yield* makeToolCallHarness({ tools: [block.tool], turn: { deliberate } })
        const outcome = yield* h.run(
          executeToolCall({ ...callInput({ name: "block_user", args: {} }), iteration: 0, attempt: testAttempt })
        )
        assert.isTrue(ToolCallOutcome.$is("History")(outcome) && outcome.success)
      }
      assert.strictEqual((yield* Ref.get(block.calls)).length, 3)
    })
  )
})
