import { Context, Effect } from "effect"

/** Where a model's window came from, most trusted first. */
type WindowSource = "learned" | "setting" | "discovered" | "table" | "default"

/** A model's context window: prompt and output together, in tokens. */
export interface ModelWindow {
  readonly tokens: number
  readonly source: WindowSource
  /**
   * Output tokens the provider asks for when a request sets none (Anthropic's `max_tokens` is
   * required, and it counts against the window); undefined: the server takes what is left.
   */
  readonly defaultOutputTokens?: number
}

export interface ModelWindowsShape {
  /**
   * The window of `model`: learned from a refusal, else `LLM_CONTEXT_TOKENS`, else its server's
   * answer, else the built-in table, else the conservative default. The first ask for a model
   * may wait (bounded) for its server's answer. Undefined: no limit is known or needed (the
   * scripted provider), and the request is sent as it is.
   */
  readonly windowOf: (model: string) => Effect.Effect<ModelWindow | undefined>
  /** A refusal named the model's window: it is kept for the process (the smaller one wins). */
  readonly learn: (model: string, tokens: number) => Effect.Effect<void>
}

/** No window known for any model: requests go as they are. */
export const noKnownWindows: ModelWindowsShape = {
  windowOf: () => Effect.succeed(undefined),
  learn: () => Effect.void
}

/**
 * The models' windows. A Reference: without wiring (tests, embedding) no window is known and the
 * budget does nothing; `main` provides the real one (`provider/context/modelWindowsLive.ts`).
 */
export const ModelWindows = Context.Reference<ModelWindowsShape>("loopcord/provider/ModelWindows", {
  defaultValue: () => noKnownWindows
})
