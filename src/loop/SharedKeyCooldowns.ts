import { Context, Data, type Effect, Option } from "effect"

/** Sharing a cooldown failed (the shared store did not answer, or refused); the pool goes on locally. */
export class SharedCooldownError extends Data.TaggedError("SharedCooldownError")<{ readonly detail: string }> {
  override get message(): string {
    return `shared key cooldowns: ${this.detail}`
  }
}

/**
 * API-key cooldowns shared between the processes of one bot (several hosts over one database),
 * by the key's index in the pool (the implementation knows the keys; nothing here does).
 */
export interface SharedKeyCooldownsShape {
  /** Rests still running that any process recorded: key index ⇒ until (epoch ms). */
  readonly resting: Effect.Effect<ReadonlyMap<number, number>, SharedCooldownError>
  /** Key `index` rests until `until` for every process (a longer rest already recorded stays). */
  readonly rest: (index: number, until: number) => Effect.Effect<void, SharedCooldownError>
  /** Key `index` answered again: its rest ends for every process. */
  readonly clear: (index: number) => Effect.Effect<void, SharedCooldownError>
}

/**
 * Where the KeyPool shares its cooldowns: none by default (one process, in memory); the
 * composition root provides the database-backed one when DATABASE_URL is PostgreSQL.
 */
export const SharedKeyCooldowns = Context.Reference<Option.Option<SharedKeyCooldownsShape>>("loopcord/loop/SharedKeyCooldowns", {
  defaultValue: () => Option.none()
})
