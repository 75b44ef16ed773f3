import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { LoopConfig } from "../../../src/config/LoopConfig"
import { deliberateModeOff } from "../../../src/domain/DeliberateToolMode"
import { GuildSettingsStore } from "../../../src/store/GuildSettingsStore"
import * as Stores from "../../../src/store/Stores"
import { DeliberateToolPlanner } from "../../../src/tools/deliberate/DeliberateToolPlanner"
import { GuildToolSource } from "../../../src/tools/GuildToolSource"
import * as InMemoryToolAffordances from "../../../src/tools/InMemoryToolAffordances"
import { ToolAffordances } from "../../../src/tools/ToolAffordances"
import { make as makeRegistry, registerAll, ToolRegistry } from "../../../src/tools/ToolRegistry"
import { rawTool } from "../../support/tools/testTools"

const webSearch = rawTool({ name: "web_search", triggerPatterns: [/\bsearch\b/i] })
const fetchUrl = rawTool({ name: "fetch_url", triggerPatterns: [/https?:\/\/\S+/i] })
const guildFetch = rawTool({ name: "guild_fetch", source: { kind: "mcp", scope: "guild", server: "Reader" } })
const guildOther = rawTool({ name: "guild_dice", source: { kind: "mcp", scope: "guild", server: "dice" } })

const guildTools = Layer.succeed(GuildToolSource, {
  forGuild: (guildId) =>
    Effect.succeed(
      guildId === "g1"
        ? { tools: [guildFetch, guildOther], hiddenBuiltins: ["fetch_url"], replacements: new Map([["fetch_url", ["guild_fetch"]]]) }
        : { tools: [], hiddenBuiltins: [] }
    )
})

const registry = Layer.effect(
  ToolRegistry,
  Effect.tap(makeRegistry, (shape) => Effect.orDie(registerAll(shape, [webSearch, fetchUrl])))
).pipe(Layer.provide(guildTools))

const planner = DeliberateToolPlanner.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(Layer.fresh(Stores.layerMemory), registry, guildTools, InMemoryToolAffordances.layer, LoopConfig.make())
  )
)

const enable = (guildId: string) =>
  Effect.flatMap(GuildSettingsStore, (settings) => settings.setCapability(guildId, "deliberate_tool_mode", true))

describe("DeliberateToolPlanner", () => {
  it.effect("DMs and guilds without the capability are never in deliberate mode", () =>
    Effect.gen(function* () {
      const { plan } = yield* DeliberateToolPlanner
      assert.deepStrictEqual(yield* plan({ guildId: undefined, channelId: "dm", messageText: "search cats" }), deliberateModeOff)
      assert.deepStrictEqual(yield* plan({ guildId: "g2", channelId: "c", messageText: "search cats" }), deliberateModeOff)
    }).pipe(Effect.provide(planner))
  )

  it.effect("with the capability on: trigger phrases, retained affordances and the settings' context turns", () =>
    Effect.gen(function* () {
      const { plan } = yield* DeliberateToolPlanner
      yield* enable("g2")
      const searching = yield* plan({ guildId: "g2", channelId: "c", messageText: "search cats" })
      assert.deepStrictEqual(searching.allowedNames, ["web_search"])
      assert.strictEqual(searching.contextTurns, 3)
      assert.isTrue((yield* plan({ guildId: "g2", channelId: "c", messageText: "hi" })).disableAllTools)
      yield* (yield* ToolAffordances).retain("c", "web_search", 3)
      assert.deepStrictEqual((yield* plan({ guildId: "g2", channelId: "c", messageText: "hi" })).allowedNames, ["web_search"])
      assert.isTrue((yield* plan({ guildId: "g2", channelId: "other", messageText: "hi" })).disableAllTools)
    }).pipe(Effect.provide(planner))
  )

  it.effect("a URL also exposes the guild tools that replace fetch_url (as the guild tool source says), not its other tools", () =>
    Effect.gen(function* () {
      const { plan } = yield* DeliberateToolPlanner
      yield* enable("g1")
      const mode = yield* plan({ guildId: "g1", channelId: "c", messageText: "what is on https://example.com ?" })
      assert.deepStrictEqual(mode.allowedNames, ["fetch_url", "guild_fetch"])
    }).pipe(Effect.provide(planner))
  )
})
