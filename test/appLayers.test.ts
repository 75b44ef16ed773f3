import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { chatLayer, terminalFrontServices } from "../src/appLayers"
import { settingsProvider } from "../src/config/dotenv"
import { initialTurnFlags } from "../src/tools/TurnState"
import { ToolRegistry } from "../src/tools/ToolRegistry"

const env = settingsProvider(Object.fromEntries([
  ["LLM_PROVIDER", "scripted"],
  ["DATABASE_URL", "sqlite::memory:"],
  ["SEARXNG_BASE_URL", "http://127.0.0.1:9/searxng"]
]))

describe("the application layers", () => {
  it.effect("register every built-in tool and declare only what fits the turn", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const names = (yield* registry.all).map((tool) => tool.name).sort()
      assert.deepStrictEqual(names, [
        "block_user",
        "fetch_url",
        "select_sticker_for_response",
        "unblock_user",
        "update_short_term_memory",
        "web_search"
      ])
      const inTerminal = yield* registry.toolsForTurn({
        provider: "scripted",
        model: "scripted",
        guildId: undefined,
        channelId: "terminal",
        flags: initialTurnFlags
      })
      // No guild: no stickers, nobody to block.
      assert.deepStrictEqual(inTerminal.map((tool) => tool.name).sort(), ["fetch_url", "update_short_term_memory", "web_search"])
    }).pipe(Effect.provide(chatLayer("scripted", terminalFrontServices).pipe(Layer.provide(ConfigProvider.layer(env))))))
})

describe("the application layers: media tools (issue 13)", () => {
  const mediaEnv = settingsProvider(Object.fromEntries([
    ["LLM_PROVIDER", "scripted"],
    ["DATABASE_URL", "sqlite::memory:"],
    ["IMAGE_BACKEND", "openai"],
    ["IMAGE_BASE_URL", "http://127.0.0.1:9/v1"],
    ["SPEECH_BASE_URL", "http://127.0.0.1:9/v1"],
    ["LLM_VISION_MODELS", "scripted"]
  ]))

  it.effect("a media tool exists exactly when its backend is configured", () =>
    Effect.gen(function*() {
      const names = (yield* (yield* ToolRegistry).all).map((tool) => tool.name)
      for (const name of ["generate_image", "generate_voice_message", "analyze_image"]) assert.include(names, name)
    }).pipe(Effect.provide(chatLayer("scripted", terminalFrontServices).pipe(Layer.provide(ConfigProvider.layer(mediaEnv))))))

  it.effect("without IMAGE_BACKEND, SPEECH_BASE_URL or a vision model there is none", () =>
    Effect.gen(function*() {
      const names = (yield* (yield* ToolRegistry).all).map((tool) => tool.name)
      for (const name of ["generate_image", "generate_voice_message", "analyze_image"]) assert.notInclude(names, name)
    }).pipe(Effect.provide(chatLayer("scripted", terminalFrontServices).pipe(Layer.provide(ConfigProvider.layer(env))))))
})
