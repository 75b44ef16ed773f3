import { Config } from "effect"
import { baseUrlSetting, toolCallingSetting } from "../config/ProviderConfig"
import { intSetting } from "../config/settings"
import { defaultJsonRepairMaxChars, minJsonRepairMaxChars } from "./jsonRepair"

/** `native`: the provider's own tool calling. `verbatim`: calls written as text and parsed (spec §8). */
export type ToolCallingMode = "native" | "verbatim"

export const defaultVerbatimMaxBufferChars = 8192

/** Settings every HTTP provider reads from the environment (design §5.2, spec §10). */
export interface HttpProviderSettings {
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
  // Spec §10: a positive integer, anything else falls back to the default.
  verbatimMaxBufferChars: Config.integer("VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS").pipe(
    Config.withDefault(defaultVerbatimMaxBufferChars),
    Config.map((value) => (value > 0 ? value : defaultVerbatimMaxBufferChars))
  )
})
