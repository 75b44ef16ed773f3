import { Effect, Layer } from "effect"
import { ContextEnricher } from "../../../chat/ContextEnricher"
import type { GuildSettingsStore } from "../../../store/GuildSettingsStore"
import { ShortTermMemoryStore } from "../../../store/ShortTermMemoryStore"
import { makeMemoryScopeResolver } from "./memoryScope"
import { renderShortTermMemory } from "./renderShortTermMemory"

/**
 * Puts the turn's short-term memory (its channel's, its thread's parent channel's, the server's
 * with `server_wide_memory`, or the DM's) in front of the conversation, so what
 * `update_short_term_memory` wrote is what the model reads on the next turn there. A store that
 * fails leaves the context without the block (logged), never the turn.
 */
export const shortTermMemoryContext: Layer.Layer<ContextEnricher, never, ShortTermMemoryStore | GuildSettingsStore> = Layer.effect(
  ContextEnricher,
  Effect.gen(function*() {
    const store = yield* ShortTermMemoryStore
    const scopeOf = yield* makeMemoryScopeResolver
    return {
      enrich: (target, messages) =>
        scopeOf(target).pipe(
          Effect.flatMap((scope) => store.get(scope, target.personaId)),
          Effect.map((memory) => {
            const block = renderShortTermMemory(memory)
            return block === undefined ? messages : [{ role: "system" as const, content: block }, ...messages]
          }),
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`Short-term memory left out of the context: ${error.message}`), messages)
          )
        )
    }
  })
)
