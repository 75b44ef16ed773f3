import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import { TurnRunner } from "../../src/chat/TurnRunner"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { shortTermMemoryContext } from "../../src/tools/builtin/memory/shortTermMemoryContext"
import { makeUpdateShortTermMemoryTool, UPDATE_SHORT_TERM_MEMORY } from "../../src/tools/builtin/memory/UpdateShortTermMemoryTool"
import { makeLogCapture } from "../support/tools/logCapture"
import { storesOnHangingDatabase } from "../store/hangingDatabase"
import { coreLayer, message } from "./harness"

const lastUser = (request: GenerationRequest) =>
  [...request.messages].reverse().find((item) => item.role === "user")?.content ?? ""

/** `remember …` asks to write the memory, then answers with what the tool said; anything else is answered at once. */
const script = ({ request }: { readonly request: GenerationRequest }) => {
  const text = lastUser(request)
  if (!text.startsWith("remember")) return S.reply(`answer to ${text}`)
  const response = request.functionHistory[0]?.functionResponse.response.result
  return response === undefined
    ? S.callTool(UPDATE_SHORT_TERM_MEMORY, { summary: text }, "Noting that. ")
    : S.reply(`tool said: ${JSON.stringify(response)}`)
}

/** The chat pipeline as `main` wires it (memory in the context, the memory tool) over a database that never answers. */
const onHungDatabase = Effect.gen(function*() {
  const { layer: stores } = yield* storesOnHangingDatabase
  const tool = yield* Effect.provide(makeUpdateShortTermMemoryTool(), stores)
  const core = coreLayer({ script, tools: [tool] })
  const runner = TurnRunner.Default.pipe(Layer.provide(shortTermMemoryContext.pipe(Layer.provide(stores))))
  return ChannelQueue.Default.pipe(Layer.provide(runner), Layer.provideMerge(core))
})

describe("a database that never answers, in a channel (issue 11.6, STORE_TIMEOUT_MS)", () => {
  it.effect("the memory lookup fails at exactly STORE_TIMEOUT_MS with a log line; the turn is answered without it, and so is the next one", () =>
    Effect.gen(function*() {
      const logs = yield* makeLogCapture
      const context = yield* Layer.build(yield* onHungDatabase)
      yield* logs.capture(Effect.gen(function*() {
        const queue = yield* ChannelQueue
        const probe = yield* ScriptedProbe
        const first = yield* queue.submit((yield* message("hello")).input)
        yield* TestClock.adjust("9999 millis")
        assert.strictEqual((yield* probe.requests).length, 0, "still waiting for the database")
        yield* TestClock.adjust("1 millis")
        const result = yield* first.result
        assert.deepStrictEqual([result.status, result.text], ["completed", "answer to hello"])
        // In a guild the memory's first lookup is whether the server shares one (decision 16).
        const timedOut = yield* logs.matching("GuildSettingsStore.isEnabled: the database did not answer within 10000 ms")
        assert.deepStrictEqual(timedOut.map((line) => line.level), ["ERROR", "WARN"], "the store's line, then what was left out")
        assert.strictEqual((yield* logs.matching("Short-term memory left out of the context")).length, 1)

        const second = yield* queue.submit((yield* message("still there?")).input)
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual((yield* second.result).text, "answer to still there?")
        assert.deepStrictEqual(yield* queue.busyChannels, [])
      }).pipe(Effect.provide(context)))
    }))

  it.effect("a tool whose store call hangs fails at exactly STORE_TIMEOUT_MS; the model is told and the turn completes", () =>
    Effect.gen(function*() {
      const logs = yield* makeLogCapture
      const context = yield* Layer.build(yield* onHungDatabase)
      yield* logs.capture(Effect.gen(function*() {
        const queue = yield* ChannelQueue
        const probe = yield* ScriptedProbe
        // A DM: the memory is the user's, so the tool's one store call is the write itself.
        const dm = (yield* message("remember the blue door")).input
        const ticket = yield* queue.submit({ ...dm, guildId: undefined, isDM: true })
        yield* TestClock.adjust("10 seconds") // the memory lookup of the context
        yield* TestClock.adjust("9999 millis")
        assert.strictEqual((yield* probe.requests).length, 1, "the tool still waits for the database")
        yield* TestClock.adjust("1 millis")
        const result = yield* ticket.result
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.toolCalls[0]?.success, false)
        assert.include(result.text, "Short-term memory could not be saved right now", "the model is told, without internals")
        const lines = yield* logs.matching("ShortTermMemoryStore.replace: the database did not answer within 10000 ms")
        assert.isAtLeast(lines.length, 1, "the detail is in the logs")
      }).pipe(Effect.provide(context)))
    }))
})
