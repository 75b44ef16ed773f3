import { Config, Context, Result, Layer } from "effect"
import { invalidSetting, mapOrFail } from "./settingError"

/**
 * The context budget's settings:
 * - `LLM_CONTEXT_TOKENS`: the models' windows, one number for every model (`32768`), or
 *   `model=tokens` pairs (`qwen3:8b=32768,llama3.1=8192`), or both (`16384,qwen3:8b=32768`: the
 *   bare number is every other model's). Unset: each model's window comes from its server, the
 *   built-in table, or the conservative default.
 * - `CONTEXT_COMPACTION`: `elide` (default) or `summarize`, what happens when eliding older tool
 *   results is not enough (see docs/architecture.md, "Context budget").
 */
export type CompactionMode = "elide" | "summarize"

export interface ContextWindowSetting {
  /** The window of every model not named below; undefined: not set. */
  readonly all: number | undefined
  /** Windows by model name, lower-cased. */
  readonly byModel: ReadonlyMap<string, number>
}

/** A window below this is raised to it: no chat model is smaller, and a budget needs room. */
const MIN_CONTEXT_TOKENS = 1024

const noWindowSetting: ContextWindowSetting = { all: undefined, byModel: new Map() }

const invalid = (raw: string, reason: string) =>
  invalidSetting("LLM_CONTEXT_TOKENS", `${reason} (got "${raw}"); expected a token count such as 32768, or model=tokens pairs such as qwen3:8b=32768,llama3.1=8192`)

const tokenCount = (text: string): number | undefined => {
  const trimmed = text.trim().replace(/_/g, "")
  if (!/^\d+$/.test(trimmed)) return undefined
  const value = Number(trimmed)
  return Number.isSafeInteger(value) ? Math.max(MIN_CONTEXT_TOKENS, value) : undefined
}

/** Parses `LLM_CONTEXT_TOKENS` (pure, for tests). */
export const parseContextWindows = (raw: string): Result.Result<ContextWindowSetting, Config.ConfigError> => {
  const entries = raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  let all: number | undefined
  const byModel = new Map<string, number>()
  for (const entry of entries) {
    const at = entry.lastIndexOf("=")
    if (at < 0) {
      const tokens = tokenCount(entry)
      if (tokens === undefined) return Result.fail(invalid(raw, `"${entry}" is not a token count`))
      if (all !== undefined) return Result.fail(invalid(raw, "more than one window for every model"))
      all = tokens
      continue
    }
    const model = entry.slice(0, at).trim().toLowerCase()
    const tokens = tokenCount(entry.slice(at + 1))
    if (model.length === 0) return Result.fail(invalid(raw, `"${entry}" names no model`))
    if (tokens === undefined) return Result.fail(invalid(raw, `"${entry}" has no token count after =`))
    byModel.set(model, tokens)
  }
  return Result.succeed({ all, byModel })
}

const contextWindowSetting: Config.Config<ContextWindowSetting> = Config.String("LLM_CONTEXT_TOKENS").pipe(
  Config.withDefault(""),
  mapOrFail(parseContextWindows)
)

const compactionSetting: Config.Config<CompactionMode> = Config.String("CONTEXT_COMPACTION").pipe(
  Config.withDefault("elide"),
  mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    return value === "elide" || value === "summarize"
      ? Result.succeed<CompactionMode>(value)
      : Result.fail(invalidSetting("CONTEXT_COMPACTION", `must be elide or summarize (got "${raw}")`))
  })
)

interface ContextSettings {
  readonly windows: ContextWindowSetting
  readonly compaction: CompactionMode
}

export const contextSettings: Config.Config<ContextSettings> = Config.all({
  windows: contextWindowSetting,
  compaction: compactionSetting
})

/**
 * A Reference: without wiring (tests, embedding) no window is set and older results are elided;
 * `main` provides the environment's values through `ContextConfig.layer`.
 */
export class ContextConfig extends Context.Reference<ContextSettings>("loopcord/config/ContextConfig", {
  defaultValue: () => ({ windows: noWindowSetting, compaction: "elide" })
}) {
  static readonly layer = Layer.effect(ContextConfig, contextSettings)
  static readonly make = (overrides: Partial<ContextSettings> = {}) =>
    Layer.succeed(ContextConfig, { windows: noWindowSetting, compaction: "elide", ...overrides })
}
