import { Context, Effect, Layer, Option } from "effect"

// Stub: only the context restart reads it (a tool result asking for a restart), never the bench.
// v3 Effect.Service → v4 Context.Service with a static layer.
export class PendingContextStash extends Context.Service<PendingContextStash, {
  readonly take: (key: string) => Effect.Effect<Option.Option<unknown>>
}>()("loopcord/loop/PendingContextStash") {
  static readonly empty = Layer.succeed(PendingContextStash, { take: () => Effect.succeed(Option.none()) })
}
