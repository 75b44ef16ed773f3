import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ChannelQueue } from "../../../../src/chat/ChannelQueue"
import { ContextEnricher } from "../../../../src/chat/ContextEnricher"
import { TurnRunner } from "../../../../src/chat/TurnRunner"
import * as S from "../../../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../../../src/provider/scripted/ScriptedProbe"
import { memoryScopeOf, ShortTermMemoryStore } from "../../../../src/store/ShortTermMemoryStore"
import { StoreError } from "../../../../src/store/StoreError"
import { shortTermMemoryContext } from "../../../../src/tools/builtin/memory/shortTermMemoryContext"
import { makeUpdateShortTermMemoryTool } from "../../../../src/tools/builtin/memory/UpdateShortTermMemoryTool"
import { coreLayer, message } from "../../../chat/harness"
import { memoryStores } from "../blocking/toolTestKit"

/** A chat turn through the real queue and runner, with the memory enricher over `stores`. */
const chat = <E>(script: S.Script, stores: Layer.Layer<ShortTermMemoryStore, E>) =>
  Effect.gen(function*() {
    const tool = yield* Effect.provide(makeUpdateShortTermMemoryTool(), stores)
    const core = coreLayer({ script, tools: [tool] })
    return ChannelQueue.Default.pipe(
      Layer.provide(TurnRunner.Default),
      Layer.provideMerge(Layer.mergeAll(core, shortTermMemoryContext.pipe(Layer.provide(stores))))
    )
  })

describe("short-term memory in the context", () => {
  it.effect("what update_short_term_memory wrote in one turn is in front of the next turn's context", () =>
    Effect.gen(function*() {
      const stores = yield* Layer.memoize(memoryStores)
      const script: S.Script = [
        S.callTool("update_short_term_memory", { summary: "planning a trip to Lisbon" }),
        S.reply("Noted."),
        S.reply("You are planning a trip to Lisbon.")
      ]
      const layer = yield* chat(script, stores)
      yield* Effect.gen(function*() {
        const queue = yield* ChannelQueue
        const first = yield* message("remember: Lisbon trip")
        yield* (yield* queue.submit(first.input)).result
        const second = yield* message("what am I planning?")
        const result = yield* (yield* queue.submit(second.input)).result
        assert.strictEqual(result.status, "completed")
        const requests = yield* (yield* ScriptedProbe).requests
        const firstTurnContext = requests[0]?.messages ?? []
        const secondTurnContext = requests[2]?.messages ?? []
        assert.isFalse(firstTurnContext.some((item) => item.content.includes("Lisbon") && item.role === "system"))
        assert.strictEqual(secondTurnContext[0]?.role, "system")
        assert.include(secondTurnContext[0]?.content ?? "", "summary: planning a trip to Lisbon")
        assert.strictEqual(secondTurnContext.at(-1)?.content, "what am I planning?")
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped))

  it.effect("a failing memory store leaves the context as the front loaded it", () =>
    Effect.gen(function*() {
      const broken = Layer.succeed(ShortTermMemoryStore, {
        get: () => Effect.fail(new StoreError({ store: "ShortTermMemoryStore", operation: "get", reason: "storage", detail: "disk on fire" })),
        replace: () => Effect.void
      })
      const enricher = yield* Effect.provide(ContextEnricher, shortTermMemoryContext.pipe(Layer.provide(broken)))
      const messages = [{ role: "user" as const, content: "hi" }]
      const target = { channelId: "c", guildId: "g", userId: "u", personaId: undefined }
      assert.deepStrictEqual(yield* enricher.enrich(target, messages), messages)
      assert.deepStrictEqual(memoryScopeOf(target), { kind: "guild", guildId: "g" })
    }))
})
