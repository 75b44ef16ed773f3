import { Context, Effect, Layer, Redacted } from "effect"
import { ProviderConfig } from "../config/ProviderConfig"

/**
 * Where a turn may be generated: the primary model, then the fallback chain, and
 * the API keys every model rotates through. An empty key list means a keyless endpoint
 * (Ollama, llama.cpp…): one attempt per model with no key.
 */
interface RoutePlanShape {
  readonly models: ReadonlyArray<string>
  readonly keys: ReadonlyArray<Redacted.Redacted<string>>
}

/** The plan with another model chain (a server's choice for one turn); the keys stay the operator's. */
export const withModels = (plan: RoutePlanShape, models: ReadonlyArray<string> | undefined): RoutePlanShape =>
  models === undefined || models.length === 0 ? plan : { ...plan, models }

export class RoutePlan extends Context.Service<RoutePlan, RoutePlanShape>()("loopcord/loop/RoutePlan") {
  /** A plan from plain values (tests, embedding). */
  static readonly make = (models: ReadonlyArray<string>, keys: ReadonlyArray<string> = []) =>
    Layer.succeed(RoutePlan, { models, keys: keys.map((key) => Redacted.make(key)) })
}

/** The route plan of the outer tier, from the provider settings. */
export const routePlanLayer: Layer.Layer<RoutePlan, never, ProviderConfig> = Layer.effect(
  RoutePlan,
  Effect.map(ProviderConfig, (settings) => ({ models: settings.models, keys: settings.apiKeys }))
)
