import { Clock, Context, Duration, Effect, Layer, Option, Ref } from "effect"

/** How long a stashed context payload waits for its restart. */
const PENDING_CONTEXT_TTL = Duration.minutes(5)
/** At most this many payloads wait at once; the oldest goes first. */
export const PENDING_CONTEXT_MAX_ENTRIES = 16

interface Entry {
  readonly item: unknown
  readonly storedAt: number
}

const make = Effect.gen(function*() {
  const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())
  const counter = yield* Ref.make(0)
  const ttl = Duration.toMillis(PENDING_CONTEXT_TTL)

  const fresh = (all: ReadonlyMap<string, Entry>, now: number) =>
    new Map([...all].filter(([, entry]) => now - entry.storedAt < ttl))

  /** Stores `item` and returns its key (the one given, or a new one). */
  const put = Effect.fn("PendingContextStash.put")(function*(item: unknown, key?: string) {
    const now = yield* Clock.currentTimeMillis
    const storedKey = key ?? `pending_context_${now.toString(36)}_${yield* Ref.getAndUpdate(counter, (n) => n + 1)}`
    yield* Ref.update(entries, (all) => {
      const next = fresh(all, now)
      next.delete(storedKey)
      next.set(storedKey, { item, storedAt: now })
      // Map order is insertion order: the first keys are the oldest.
      for (const oldest of [...next.keys()].slice(0, Math.max(0, next.size - PENDING_CONTEXT_MAX_ENTRIES))) {
        next.delete(oldest)
      }
      return next
    })
    return storedKey
  })

  /** Takes and deletes the payload stored under `key`; none when unknown, taken or expired. */
  const take = Effect.fn("PendingContextStash.take")(function*(key: string) {
    const now = yield* Clock.currentTimeMillis
    return yield* Ref.modify(entries, (all): [Option.Option<unknown>, ReadonlyMap<string, Entry>] => {
      const next = fresh(all, now)
      const entry = next.get(key)
      next.delete(key)
      return [entry === undefined ? Option.none() : Option.some(entry.item), next]
    })
  })

  /** Payloads currently waiting (expired ones excluded). */
  const size = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.map(Ref.get(entries), (all) => fresh(all, now).size))

  return { put, take, size } as const
})

/**
 * Context payloads too large or too rich to pass through a tool result (images, transcripts):
 * a tool stashes the payload and returns `pending_context_key`; the context restart takes it
 * (docs/architecture.md, "Context restarts"). Taking deletes, so a replayed key injects nothing the second time. All time is
 * on the Clock.
 */
export class PendingContextStash extends Context.Service<PendingContextStash, Effect.Success<typeof make>>()("loopcord/loop/PendingContextStash") {
  static readonly Default: Layer.Layer<PendingContextStash> = Layer.effect(PendingContextStash, make)
}
