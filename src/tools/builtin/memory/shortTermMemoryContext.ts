import { Effect, Layer } from "effect"
import { ContextEnricher } from "../../../chat/ContextEnricher"
import { memoryScopeOf, ShortTermMemoryStore } from "../../../store/ShortTermMemoryStore"
import { renderShortTermMemory } from "./renderShortTermMemory"

/**
 * Puts the scope's short-term memory in front of the conversation, so what
 * `update_short_term_memory` wrote is what the model reads on the next turn. A store that fails
 * leaves the context without the block (logged), never the turn.
 */
export const shortTermMemoryContext: Layer.Layer<ContextEnricher, never, ShortTermMemoryStore> = Layer.effect(
  ContextEnricher,
  Effect.gen(function*() {
    const store = yield* ShortTermMemoryStore
    return {
      enrich: (target, messages) =>
        store.get(memoryScopeOf(target), target.personaId).pipe(
          Effect.map((memory) => {
            const block = renderShortTermMemory(memory)
            return block === undefined ? messages : [{ role: "system" as const, content: block }, ...messages]
          }),
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning(`Short-term memory left out of the context: ${error.message}`), messages)
          )
        )
    }
  })
)
