import { Context, Effect, Layer } from "effect"

/** Deliberate tool mode's retention window. */
export interface ToolAffordancesShape {
  readonly retain: (channelId: string, toolName: string, turns: number) => Effect.Effect<void>
  readonly retained: (channelId: string) => Effect.Effect<ReadonlyArray<string>>
  readonly turnEnded: (channelId: string) => Effect.Effect<void>
}

export class ToolAffordances extends Context.Service<ToolAffordances, ToolAffordancesShape>()("loopcord/tools/ToolAffordances") {
  /** Stub (the bench's two sides use the same): only deliberate mode reads it. */
  static readonly none = Layer.succeed(ToolAffordances, {
    retain: () => Effect.void,
    retained: () => Effect.succeed([]),
    turnEnded: () => Effect.void
  })
}
