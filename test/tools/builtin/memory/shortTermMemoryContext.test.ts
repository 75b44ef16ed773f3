import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ChannelQueue } from "../../../../src/chat/ChannelQueue"
import { ContextEnricher } from "../../../../src/chat/ContextEnricher"
import type { TurnInput } from "../../../../src/chat/TurnInput"
import { TurnRunner } from "../../../../src/chat/TurnRunner"
import type { GenerationRequest } from "../../../../src/provider/GenerationRequest"
import * as S from "../../../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../../../src/provider/scripted/ScriptedProbe"
import { GuildSettingsStore } from "../../../../src/store/GuildSettingsStore"
import { ShortTermMemoryStore } from "../../../../src/store/ShortTermMemoryStore"
import type { Stores } from "../../../../src/store/Stores"
import { StoreError } from "../../../../src/store/StoreError"
import { shortTermMemoryContext } from "../../../../src/tools/builtin/memory/shortTermMemoryContext"
import { makeUpdateShortTermMemoryTool, UPDATE_SHORT_TERM_MEMORY } from "../../../../src/tools/builtin/memory/UpdateShortTermMemoryTool"
import { coreLayer, message } from "../../../chat/harness"
import { memoryStores } from "../blocking/toolTestKit"

/** A chat turn through the real queue and runner, with the memory tool and enricher over `stores`. */
const chat = <E>(script: S.Script, stores: Layer.Layer<Stores, E>) =>
  Effect.gen(function*() {
    const tool = yield* Effect.provide(makeUpdateShortTermMemoryTool(), stores)
    const core = coreLayer({ script, tools: [tool] })
    return ChannelQueue.Default.pipe(
      Layer.provide(TurnRunner.Default),
      Layer.provideMerge(Layer.mergeAll(core, stores, shortTermMemoryContext.pipe(Layer.provide(stores))))
    )
  })

const lastUser = (request: GenerationRequest) => [...request.messages].reverse().find((item) => item.role === "user")?.content ?? ""

/** `remember X` writes X as the summary, then says "Noted."; anything else is answered at once. */
const rememberScript: S.Script = ({ request }) => {
  const text = lastUser(request)
  if (!text.startsWith("remember ")) return S.reply(`answer to ${text}`)
  return request.functionHistory.length === 0 ? S.callTool(UPDATE_SHORT_TERM_MEMORY, { summary: text.slice("remember ".length) }) : S.reply("Noted.")
}

/** The memory block the model was shown on the request answering `text`, if any. */
const memoryShownFor = (requests: ReadonlyArray<GenerationRequest>, text: string): string | undefined => {
  const request = requests.find((candidate) => lastUser(candidate) === text)
  assert.isDefined(request, `a request answered "${text}"`)
  return request?.messages.find((item) => item.role === "system" && item.content.includes("short-term memory"))?.content
}

/** Sends one message through the queue and waits for its turn. */
const say = (text: string, place: { readonly channelId: string; readonly parentChannelId?: string }) =>
  Effect.gen(function*() {
    const queue = yield* ChannelQueue
    const turn = yield* message(text, { channelId: place.channelId })
    const input: TurnInput = { ...turn.input, ...(place.parentChannelId === undefined ? {} : { parentChannelId: place.parentChannelId }) }
    const result = yield* (yield* queue.submit(input)).result
    assert.strictEqual(result.status, "completed", text)
  })

describe("short-term memory in the context", () => {
  it.effect("what update_short_term_memory wrote in one turn is in front of the next turn's context", () =>
    Effect.gen(function*() {
      const stores = Layer.succeedContext(yield* Layer.build(memoryStores))
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

  it.effect("[decision 16] a memory written in one channel is absent from another channel's context; its threads see it", () =>
    Effect.gen(function*() {
      const stores = Layer.succeedContext(yield* Layer.build(memoryStores))
      const layer = yield* chat(rememberScript, stores)
      yield* Effect.gen(function*() {
        yield* say("remember the moderators will ban user X", { channelId: "moderators" })
        yield* say("what is going on?", { channelId: "general" })
        yield* say("anything new?", { channelId: "moderators" })
        yield* say("and in this thread?", { channelId: "thread-of-moderators", parentChannelId: "moderators" })
        yield* say("and in a thread of general?", { channelId: "thread-of-general", parentChannelId: "general" })
        // Written in a thread: the parent channel's memory.
        yield* say("remember the thread picked a date", { channelId: "thread-of-general", parentChannelId: "general" })
        yield* say("back in general?", { channelId: "general" })
        yield* say("and the moderators?", { channelId: "moderators" })
        const requests = yield* (yield* ScriptedProbe).requests
        assert.isUndefined(memoryShownFor(requests, "what is going on?"), "#general must not see #moderators' memory")
        assert.include(memoryShownFor(requests, "anything new?") ?? "", "summary: the moderators will ban user X")
        assert.include(memoryShownFor(requests, "and in this thread?") ?? "", "summary: the moderators will ban user X")
        assert.isUndefined(memoryShownFor(requests, "and in a thread of general?"))
        assert.include(memoryShownFor(requests, "back in general?") ?? "", "summary: the thread picked a date")
        assert.include(memoryShownFor(requests, "and the moderators?") ?? "", "summary: the moderators will ban user X")
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped))

  it.effect("[decision 16] with server_wide_memory on, a memory written in one channel is in every channel's context (and only while it is on)", () =>
    Effect.gen(function*() {
      const stores = Layer.succeedContext(yield* Layer.build(memoryStores))
      const layer = yield* chat(rememberScript, stores)
      yield* Effect.gen(function*() {
        const settings = yield* GuildSettingsStore
        yield* say("remember channel-only note", { channelId: "general" })
        yield* settings.setCapability("guild-1", "server_wide_memory", true)
        yield* say("remember the raid is on Friday", { channelId: "events" })
        yield* say("when is the raid?", { channelId: "general" })
        yield* say("and here?", { channelId: "thread-9", parentChannelId: "offtopic" })
        yield* settings.setCapability("guild-1", "server_wide_memory", false)
        yield* say("and now?", { channelId: "general" })
        const requests = yield* (yield* ScriptedProbe).requests
        const inGeneral = memoryShownFor(requests, "when is the raid?") ?? ""
        assert.include(inGeneral, "summary: the raid is on Friday")
        assert.notInclude(inGeneral, "channel-only note", "the server's memory replaces the channel's, it is not merged")
        assert.include(memoryShownFor(requests, "and here?") ?? "", "summary: the raid is on Friday")
        // Off again: #general has its own memory back, the server's stays aside.
        const after = memoryShownFor(requests, "and now?") ?? ""
        assert.include(after, "summary: channel-only note")
        assert.notInclude(after, "Friday")
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped))

  /** The enricher over these two stores exactly (the rest of the test's database left out). */
  const enricherOver = (memory: ShortTermMemoryStore["Service"], settings: GuildSettingsStore["Service"]) =>
    Effect.provide(
      ContextEnricher,
      shortTermMemoryContext.pipe(Layer.provide(Layer.merge(Layer.succeed(ShortTermMemoryStore, memory), Layer.succeed(GuildSettingsStore, settings))))
    )
  const target = { channelId: "c", parentChannelId: undefined, guildId: "g", userId: "u", personaId: undefined }
  const messages = [{ role: "user" as const, content: "hi" }]
  const failing = (store: string, operation: string) =>
    Effect.fail(new StoreError({ store, operation, reason: "storage", detail: "disk on fire" }))

  it.effect("a failing memory store or server_wide_memory lookup leaves the context as the front loaded it (never the server's memory by guess)", () =>
    Effect.gen(function*() {
      const store = yield* ShortTermMemoryStore
      const settings = yield* GuildSettingsStore
      yield* store.replace({ kind: "server", guildId: "g" }, undefined, { summary: "server secret" })
      yield* store.replace({ kind: "channel", guildId: "g", channelId: "c" }, undefined, { summary: "channel note" })
      // Over the working stores the channel's note is shown: what follows fails only by the broken part.
      const shown = yield* (yield* enricherOver(store, settings)).enrich(target, messages)
      assert.include(shown[0]?.content ?? "", "summary: channel note")
      assert.strictEqual(shown.length, 2)
      const brokenMemory = { ...store, get: () => failing("ShortTermMemoryStore", "get") }
      assert.deepStrictEqual(yield* (yield* enricherOver(brokenMemory, settings)).enrich(target, messages), messages)
      const brokenSettings = { ...settings, isEnabled: () => failing("GuildSettingsStore", "isEnabled") }
      assert.deepStrictEqual(yield* (yield* enricherOver(store, brokenSettings)).enrich(target, messages), messages)
    }).pipe(Effect.provide(memoryStores)))
})
