import { Config, Result } from "effect"
import { baseUrlSetting, toolCallingSetting } from "./ProviderConfig"
import { intSetting, integerConfig } from "./settings"
import { invalidSetting, mapOrFail } from "./settingError"

/** Default and floor of `BOT_JSON_REPAIR_MAX_CHARS` (the longest cut-off tool-argument JSON the providers repair). */
export const defaultJsonRepairMaxChars = 1_048_576
const minJsonRepairMaxChars = 1024

/**
 * `native`: the provider's own tool calling. `verbatim`: calls written as text and parsed
 * (docs/architecture.md, "Verbatim tool calls").
 */
export type ToolCallingMode = "native" | "verbatim"

export const defaultVerbatimMaxBufferChars = 8192

/** Settings every HTTP provider reads from the environment (public names: docs/architecture.md, "Settings"). */
interface HttpProviderSettings {
  readonly baseUrl: string | undefined
  readonly toolCalling: ToolCallingMode
  readonly jsonRepairMaxChars: number
  readonly verbatimMaxBufferChars: number
}

export const httpProviderSettings: Config.Config<HttpProviderSettings> = Config.all({
  // Parsed once, in config/ProviderConfig (validated, any case, with the vendor fallbacks).
  baseUrl: baseUrlSetting,
  toolCalling: toolCallingSetting,
  jsonRepairMaxChars: intSetting("BOT_JSON_REPAIR_MAX_CHARS", { default: defaultJsonRepairMaxChars, min: minJsonRepairMaxChars }),
  // A positive integer; anything else falls back to the default (an old setting may be 0 or negative).
  verbatimMaxBufferChars: integerConfig("VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS").pipe(
    Config.withDefault(defaultVerbatimMaxBufferChars),
    Config.map((value) => (value > 0 ? value : defaultVerbatimMaxBufferChars))
  )
})

/**
 * `ANTHROPIC_PROMPT_CACHE`: `on` (default) places prompt-caching breakpoints on Anthropic
 * requests, `off` sends none. Also accepts true/false, yes/no, 1/0; anything else fails start-up.
 */
export const anthropicPromptCacheSetting: Config.Config<boolean> = Config.String("ANTHROPIC_PROMPT_CACHE").pipe(
  Config.withDefault("on"),
  mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    if (["on", "true", "yes", "1"].includes(value)) return Result.succeed(true)
    if (["off", "false", "no", "0"].includes(value)) return Result.succeed(false)
    return Result.fail(invalidSetting("ANTHROPIC_PROMPT_CACHE", `must be on or off (got "${raw}")`))
  })
)

/** NovelAI's fragment session (`novelai/NovelAi.ts`): one request's and one pass's output tokens. */
interface NovelAiSettings {
  /** `NOVELAI_FRAGMENT_TOKENS` (150, min 1): `max_length` of one request. */
  readonly fragmentTokens: number
  /** `NOVELAI_MAX_OUTPUT_TOKENS` (600, min 1): the whole pass, across its fragments. */
  readonly maxOutputTokens: number
}

export const novelAiSettings: Config.Config<NovelAiSettings> = Config.all({
  fragmentTokens: intSetting("NOVELAI_FRAGMENT_TOKENS", { default: 150, min: 1 }),
  maxOutputTokens: intSetting("NOVELAI_MAX_OUTPUT_TOKENS", { default: 600, min: 1 })
})
