import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { Conclusion, type LoopHooks, noHooks, type PassFate } from "../../src/loop/LoopHooks"
import { defaultPassPolicy } from "../../src/loop/PassPolicy"
import { runToolLoop } from "../../src/loop/runToolLoop"
import { novelAiPassPolicy } from "../../src/provider/novelai/novelAiPassPolicy"
import { passPolicyFor } from "../../src/provider/passPolicies"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { rawTool } from "../support/tools/testTools"
import { testAttempt } from "../support/tools/toolCallHarness"
import { withLoopHarness } from "./harness"

const attempt = { ...testAttempt, provider: "scripted" }

/** Hooks that record what the loop core asks of them; the first conclusion is sent back once. */
const recordingHooks = Effect.gen(function*() {
  const written = yield* Ref.make<ReadonlyArray<string>>([])
  const fates = yield* Ref.make<ReadonlyArray<readonly [string, PassFate]>>([])
  const concluded = yield* Ref.make(0)
  const wrapped = yield* Ref.make(0)
  const hooks: LoopHooks = {
    ...noHooks,
    requestNotes: Effect.succeed([{ role: "user", content: "a note from the hook" }]),
    passSink: (sink) => ({ ...sink, write: (delta) => Effect.andThen(Ref.update(written, (all) => [...all, delta]), sink.write(delta)) }),
    aroundCalls: (calls) => Effect.andThen(Ref.update(wrapped, (n) => n + 1), calls),
    passEnded: (text, fate) => Ref.update(fates, (all) => [...all, [text, fate] as const]),
    conclude: (input) =>
      Effect.map(Ref.getAndUpdate(concluded, (n) => n + 1), (n) =>
        n === 0 ? Conclusion.Revise() : Conclusion.Finished({ status: input.status, text: `${input.responseText}!`, deliveryFailed: undefined })),
    usage: Effect.succeed({ inputTokens: 7, outputTokens: 3, totalTokens: 10 })
  }
  return { hooks, written, fates, concluded, wrapped }
})

describe("the loop core and its hooks (docs/architecture.md, \"Loop core and its hooks\")", () => {
  it.effect("the loop asks its hooks, never a named feature: sink, notes, calls, pass fates, conclusion, usage", () =>
    Effect.gen(function*() {
      const r = yield* recordingHooks
      yield* withLoopHarness({
        tools: [rawTool({ name: "look", execute: () => Effect.succeed(toolSuccess()) })],
        script: [S.callTool("look", {}, "Looking."), S.reply("first answer"), S.reply("second answer")]
      }, () =>
        Effect.gen(function*() {
          const result = yield* runToolLoop({ attempt, apiKey: undefined, hooks: () => Effect.succeed(r.hooks) })
          // The first conclusion was sent back: the loop ran another pass, and the hook's answer stands.
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.text, "second answer!")
          assert.strictEqual(yield* Ref.get(r.concluded), 2)
          assert.deepStrictEqual(yield* Ref.get(r.written), ["Looking.", "first answer", "second answer"])
          assert.deepStrictEqual(yield* Ref.get(r.fates), [["Looking.", "kept"], ["first answer", "kept"], ["second answer", "kept"]])
          assert.strictEqual(yield* Ref.get(r.wrapped), 1)
          assert.strictEqual(result.usage?.totalTokens, 10, "the hook's tokens count toward the attempt")
          const requests = yield* (yield* ScriptedProbe).requests
          assert.isTrue(requests.every((request) => request.messages.some((message) => message.content === "a note from the hook")))
          // Sent back to be written again: the held narration was never shown, so it is not replayed as said.
          assert.strictEqual(requests[2]?.functionHistory[0]?.preToolCallTextParts, undefined)
          assert.deepStrictEqual(requests[1]?.functionHistory[0]?.preToolCallTextParts, [{ type: "text", text: "Looking." }])
        }))
    }))

  it.effect("a stop throws a pass's text away through the hook; held output leaves nothing to carry", () =>
    Effect.gen(function*() {
      const r = yield* recordingHooks
      yield* withLoopHarness({ script: [[S.text("partial"), S.hang]] }, ({ signals }) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoop({ attempt, apiKey: undefined, hooks: () => Effect.succeed({ ...r.hooks, holdsOutput: true }) }))
          yield* (yield* ScriptedProbe).awaitCall(0)
          yield* Effect.yieldNow
          yield* signals.requestStop({ requesterId: "user-1" })
          const result = yield* Fiber.await(fiber).pipe(Effect.flatten)
          assert.strictEqual(result.status, "stopped_by_user")
          assert.strictEqual(result.text, "")
          assert.deepStrictEqual((yield* Ref.get(r.fates)).map(([, fate]) => fate), ["discarded"])
        }))
    }))

  it("each provider family's pass policy follows the attempt's provider; the others get the default", () => {
    assert.strictEqual(passPolicyFor("novelai"), novelAiPassPolicy)
    assert.strictEqual(passPolicyFor("openai-compatible"), defaultPassPolicy)
    assert.strictEqual(passPolicyFor("scripted"), defaultPassPolicy)
  })
})
