import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"
import { UserNotice } from "../../src/loop/UserNotice"
import { runToolLoop } from "../../src/loop/runToolLoop"
import * as S from "../../src/provider/scripted/Script"
import { setFlag } from "../../src/tools/TurnState"
import { constantTool, makeRecordingTool } from "../support/tools/testTools"
import { testAttempt } from "../support/tools/toolCallHarness"
import { withLoopHarness } from "./harness"

/**
 * The NovelAI branch of runToolLoop (spec §2.3 steps 8–10, §2.4) and the NovelAI pass fields
 * (spec §1.1 `detailsContent`, `naiContinuationPrefill`; §2.5, §2.9). The model is scripted;
 * the attempt's provider family is `novelai`, which is what the loop looks at.
 */
const novelai = { ...testAttempt, provider: "novelai" }
const loop = (provider = novelai) => runToolLoop({ attempt: provider, apiKey: undefined })

const details = (text: string) => S.ScriptStep.Emit({ event: ProviderEvent.SceneDetails({ text }) })
const fragment = (text: string) => S.ScriptStep.Emit({ event: ProviderEvent.ContinuationFragment({ text }) })

describe("runToolLoop, NovelAI branch (spec §2.3 steps 8–10, §2.4)", () => {
  it.effect("[34] pre-tool text + successful web_search (needs a follow-up) with suppressTextOutput on: the loop continues, suppressTextOutput turns off, requiresFollowUp(web_search, novelai, server)", () =>
    withLoopHarness({
      tools: [constantTool("web_search", toolSuccess({ results: ["r"] }), { requiresFollowUp: true })],
      script: [S.callTool("web_search", { query: "q" }, "Let me search."), S.reply("Found it.")]
    }, ({ collected, followUpCalls, tools }) =>
      Effect.gen(function*() {
        yield* setFlag(tools.state, "suppressTextOutput", true)
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Found it.", 2])
        assert.isFalse((yield* Ref.get(tools.state.flags)).suppressTextOutput)
        assert.deepStrictEqual(yield* followUpCalls, [["web_search", "novelai", "guild-1"]])
        // The first pass ran while suppressed: its narration was withheld; the follow-up was shown.
        assert.strictEqual(yield* collected.delivered, "Found it.")
      })))

  it.effect("[35] pre-tool text + a successful tool that needs no follow-up: completed after 1 pass with the pre-tool text", () =>
    withLoopHarness({
      tools: [constantTool("react", toolSuccess())],
      script: [S.callTool("react", { emoji: "👍" }, "Nice one!"), S.reply("never")]
    }, ({ followUpCalls }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Nice one!", 1])
        assert.deepStrictEqual(yield* followUpCalls, [["react", "novelai", "guild-1"]])
      })))

  it.effect("[35] the same with another provider family continues (the NovelAI rule only)", () =>
    withLoopHarness({
      tools: [constantTool("react", toolSuccess())],
      script: [S.callTool("react", {}, "Nice one!"), S.reply("And more.")]
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop({ ...testAttempt, provider: "openai-compatible" })
        assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "And more.", 2])
      })))

  it.effect("[36] pre-tool text, one tool failure, then an answer: suppressTextOutput stays on, 2 passes, no notice; the retry posts nothing", () =>
    withLoopHarness({
      tools: [constantTool("lookup", toolFailure("lookup failed"))],
      script: [S.callTool("lookup", {}, "Checking the notes."), S.reply("Checking the notes. Here they are.")]
    }, ({ collected, tools }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.isTrue((yield* Ref.get(tools.state.flags)).suppressTextOutput)
        assert.strictEqual(result.passes.length, 2)
        assert.deepStrictEqual(yield* collected.notices, [])
        assert.strictEqual(yield* collected.delivered, "Checking the notes.", "the narration is not posted twice")
        assert.deepStrictEqual([result.status, result.text], ["completed", "Checking the notes."])
      })))

  it.effect("[37] repeated failures after pre-tool text: exactly 3 executions, completed with the text shown, the retry-exhausted notice (ERROR)", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("lookup", () => Effect.succeed(toolFailure("still failing")))
      yield* withLoopHarness({
        tools: [recorder.tool],
        script: Array.from({ length: 6 }, () => S.callTool("lookup", {}, "Let me check."))
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 3)
          assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Let me check.", 3])
          assert.deepStrictEqual(yield* collected.notices, [UserNotice.NovelAiToolRetryExhausted({ failures: 3, lastTool: "lookup" })])
          assert.strictEqual(yield* collected.delivered, "Let me check.")
        }))
    }))

  it.effect("[37] failures without pre-tool text count only toward the usual cap (5), not the NovelAI retry", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("lookup", () => Effect.succeed(toolFailure("still failing")))
      yield* withLoopHarness({ tools: [recorder.tool], script: Array.from({ length: 8 }, () => S.callTool("lookup")) }, ({ collected, tools }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "error")
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 5)
          assert.isFalse((yield* Ref.get(tools.state.flags)).suppressTextOutput)
          assert.deepStrictEqual((yield* collected.notices).map((notice) => notice._tag), ["ToolErrorLoop"])
        }))
    }))

  it.effect("[34] after two retries a success that needs a follow-up turns suppression off: the answer is shown", () =>
    Effect.gen(function*() {
      let calls = 0
      const recorder = yield* makeRecordingTool("lookup", () => Effect.sync(() => (++calls === 3 ? toolSuccess({ ok: true }) : toolFailure("nope"))))
      yield* withLoopHarness({
        tools: [{ ...recorder.tool, requiresFollowUp: true }],
        script: [...Array.from({ length: 3 }, () => S.callTool("lookup", {}, "Let me check.")), S.reply("Here it is.")]
      }, ({ collected, tools }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 3)
          assert.deepStrictEqual([result.status, result.text], ["completed", "Here it is."])
          assert.isFalse((yield* Ref.get(tools.state.flags)).suppressTextOutput)
          assert.deepStrictEqual(yield* collected.notices, [])
          assert.strictEqual(yield* collected.delivered, "Let me check.Here it is.", "the two retries posted nothing")
        }))
    }))

  it.effect("[37] a success resets the NovelAI failure count: fail, fail, success, then three more failures before giving up", () =>
    Effect.gen(function*() {
      let calls = 0
      const recorder = yield* makeRecordingTool("lookup", () => Effect.sync(() => (++calls === 3 ? toolSuccess({ ok: true }) : toolFailure("nope"))))
      yield* withLoopHarness({
        tools: [{ ...recorder.tool, requiresFollowUp: true }],
        script: Array.from({ length: 9 }, () => S.callTool("lookup", {}, "Let me check."))
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 6)
          assert.deepStrictEqual([result.status, result.text], ["completed", "Let me check."])
          assert.deepStrictEqual(yield* collected.notices, [UserNotice.NovelAiToolRetryExhausted({ failures: 3, lastTool: "lookup" })])
        }))
    }))
})

describe("runToolLoop, NovelAI pass fields (spec §2.5, §2.9)", () => {
  it.effect("[41] an empty follow-up that carries naiContinuationPrefill never settles: empty_response", () =>
    withLoopHarness({ tools: [constantTool("react", toolSuccess())], script: [S.callTool("react", {}, "Here"), [fragment("and then she"), S.finish("stop")]] }, () =>
      Effect.gen(function*() {
        const result = yield* loop({ ...testAttempt, provider: "scripted" })
        assert.strictEqual(result.status, "empty_response")
        assert.strictEqual(result.passes[1]?.naiContinuationPrefill, "and then she")
      })))

  it.effect("[41] without the fragment the same empty follow-up settles (scenario 38)", () =>
    withLoopHarness({ tools: [constantTool("react", toolSuccess())], script: [S.callTool("react", {}, "Here"), [S.finish("stop")]] }, () =>
      Effect.gen(function*() {
        const result = yield* loop({ ...testAttempt, provider: "scripted" })
        assert.deepStrictEqual([result.status, result.text], ["completed", "Here"])
      })))

  it.effect("[2.9] scene metadata of every pass is merged and appended as [Scene Metadata], never shown", () =>
    withLoopHarness({
      tools: [constantTool("react", toolSuccess(), { requiresFollowUp: true })],
      script: [
        [S.text("Sure."), details("Location: kitchen"), S.toolCall("react"), S.finish("tool_calls")],
        [S.text("She smiles."), details("Mood: warm"), S.finish("stop")]
      ]
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.text, "She smiles.\n\n[Scene Metadata]\nLocation: kitchen\n\nMood: warm")
        assert.strictEqual(result.passes[0]?.detailsContent, "Location: kitchen")
        assert.strictEqual(yield* collected.delivered, "Sure.She smiles.", "metadata is never delivered")
      })))

  it.effect("[2.9] a single pass: its scene metadata follows its text", () =>
    withLoopHarness({
      tools: [],
      script: [[S.text("Half"), details("Time: night"), S.finish("stop")]]
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.text, "Half\n\n[Scene Metadata]\nTime: night")
      })))
})
