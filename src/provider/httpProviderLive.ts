import { Layer } from "effect"
import { type HttpProviderKind, layerConfigFor } from "./httpProviders"
import { providerHttpClient } from "./providerHttpClient"

/** An HTTP provider over providerHttpClient (loopcord's undici HttpClient) (loaded only when LLM_PROVIDER names one). */
export const httpProviderLive = (kind: HttpProviderKind) => layerConfigFor(kind).pipe(Layer.provide(providerHttpClient()))
