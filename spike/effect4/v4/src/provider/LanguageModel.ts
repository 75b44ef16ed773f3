import { Context, type Stream } from "effect"
import type { ProviderError } from "../domain/ProviderError"
import type { ProviderEvent } from "../domain/ProviderEvent"
import type { GenerationRequest } from "./GenerationRequest"

/** A streaming chat model. Interrupting the stream must abort the underlying request. */
export class LanguageModel extends Context.Service<LanguageModel, {
  readonly name: string
  readonly stream: (request: GenerationRequest) => Stream.Stream<ProviderEvent, ProviderError>
}>()("loopcord/provider/LanguageModel") {}
