import { Context, type Stream } from "effect"
import type { ProviderError } from "../domain/ProviderError"
import type { ProviderEvent } from "../domain/ProviderEvent"
import type { GenerationRequest } from "./GenerationRequest"

/**
 * A streaming chat model. Each provider module (openai/, anthropic/, google/, scripted/)
 * exports a `layer`; swapping providers is providing a different Layer. Interrupting the
 * stream must abort the underlying request (the socket is closed, nothing keeps generating).
 */
export class LanguageModel extends Context.Service<LanguageModel, {
  /** Provider family name as tools see it (`ToolContext.provider`), e.g. `openai-compatible`. */
  readonly name: string
  readonly stream: (request: GenerationRequest) => Stream.Stream<ProviderEvent, ProviderError>
}>()("loopcord/provider/LanguageModel") {}
