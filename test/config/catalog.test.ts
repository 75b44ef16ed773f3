import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result } from "effect"
import { definedVariables, renderSettings, SETTING_DOCS, settingDefinitions, settingsCatalog } from "../../src/config/catalog"
import { recordedSettingFacts } from "../../src/config/settings"
import { settingsProvider } from "../../src/config/dotenv"

/** Every definition evaluated under `env`: the parsed values (or the failures) in one comparable list. */
const evaluateAll = (env: Record<string, string>) =>
  Effect.forEach(settingDefinitions, (definition) =>
    Effect.result(definition).pipe(Effect.map(Result.match({ onFailure: (error) => ({ failed: String(error) }), onSuccess: (value) => ({ value }) }))))
    .pipe(Effect.provideService(ConfigProvider.ConfigProvider, settingsProvider(env)))

/** What the definitions need to evaluate at all (LLM_MODELS is required for real providers, DISCORD_TOKEN for the bot). */
const baseline = { LLM_MODELS: "m", DISCORD_TOKEN: "t" }

describe("the settings catalogue (one source for --help)", () => {
  it.effect("every variable the definitions read is documented, and every documented variable is read", () =>
    Effect.gen(function*() {
      const defined = yield* definedVariables
      assert.isAbove(defined.length, 40)
      const undocumented = defined.filter((name) => SETTING_DOCS[name] === undefined)
      assert.deepStrictEqual(undocumented, [], "add these to SETTING_DOCS in src/config/catalog.ts")
      const unread = Object.keys(SETTING_DOCS).filter((name) => !defined.includes(name))
      assert.deepStrictEqual(unread, [], "documented but no definition reads them (add the Config to settingDefinitions)")
    }))

  it.effect("a documented default is the definition's real default: setting it changes nothing", () =>
    Effect.gen(function*() {
      const facts = recordedSettingFacts()
      for (const [name, doc] of Object.entries(SETTING_DOCS)) {
        assert.isFalse(facts.has(name) && doc.default !== undefined, `${name}: the default is recorded by its settings.ts helper; drop it from SETTING_DOCS`)
        const shown = facts.get(name)?.default ?? doc.default
        if (shown === undefined || doc.derivedDefault !== undefined) continue
        const others = Object.fromEntries(Object.entries(baseline).filter(([key]) => key !== name))
        const unset = yield* evaluateAll(others)
        const explicit = yield* evaluateAll({ ...others, [name]: shown })
        assert.deepStrictEqual(explicit, unset, `${name}=${JSON.stringify(shown)} is not the same as leaving ${name} unset`)
      }
    }))

  it.effect("the check above can fail: a wrong documented default is caught", () =>
    Effect.gen(function*() {
      const unset = yield* evaluateAll(baseline)
      const wrong = yield* evaluateAll({ ...baseline, CHANNEL_QUEUE_MAX: "6" })
      assert.notDeepEqual(wrong, unset)
    }))

  it.effect("--help shows each variable once, with its meaning and default or what unset means", () =>
    Effect.gen(function*() {
      const catalog = yield* settingsCatalog
      const text = renderSettings(catalog)
      const defined = yield* definedVariables
      for (const name of defined) {
        const lines = text.split("\n").filter((line) => line.trimStart().startsWith(`${name} `))
        assert.strictEqual(lines.length, 1, name)
      }
      assert.match(text, /^ {2}CHANNEL_QUEUE_MAX +replies that may wait per channel.* \[default: 5, min 1\]$/m)
      assert.match(text, /^ {2}LLM_PROVIDER +.*\[default: openai-compatible\]$/m)
      assert.match(text, /^ {2}HEALTH_PORT +.*\[unset: off\]$/m)
      assert.match(text, /^ {2}LOG_FORMAT +.*\[default: json when RUN_ENV=production, else pretty\]$/m)
      assert.match(text, /^Operations:$/m)
    }))
})
