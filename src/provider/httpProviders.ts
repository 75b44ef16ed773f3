import type { HttpClient } from "effect/http"
import type { Config, Layer } from "effect"
import * as Anthropic from "./anthropic/Anthropic"
import * as Gemini from "./google/Gemini"
import type { LanguageModel } from "./LanguageModel"
import * as NovelAi from "./novelai/NovelAi"
import * as OpenAiCompatible from "./openai/OpenAiCompatible"
import * as OpenAiResponses from "./openai/OpenAiResponses"

/** The providers that talk HTTP (`LLM_PROVIDER` values other than `scripted`). */
export type HttpProviderKind = "openai-compatible" | "openai-responses" | "anthropic" | "google" | "novelai"

/**
 * The provider Layer for `LLM_PROVIDER`, configured from the environment (`LLM_BASE_URL`,
 * `LLM_TOOL_CALLING`, `BOT_JSON_REPAIR_MAX_CHARS`, `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`, and
 * each provider's own: `ANTHROPIC_PROMPT_CACHE`, `NOVELAI_*`).
 * API keys are not read here: they arrive per request, because the outer tier rotates them.
 * Provide an `HttpClient` (main: `NodeHttpClient.layerUndici`).
 */
export const layerConfigFor = (
  kind: HttpProviderKind
): Layer.Layer<LanguageModel, Config.ConfigError, HttpClient.HttpClient> => {
  switch (kind) {
    case "openai-compatible":
      return OpenAiCompatible.layerConfig()
    case "openai-responses":
      return OpenAiResponses.layerConfig()
    case "anthropic":
      return Anthropic.layerConfig()
    case "google":
      return Gemini.layerConfig()
    case "novelai":
      return NovelAi.layerConfig()
  }
}
