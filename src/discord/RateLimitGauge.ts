import { RESTEvents } from "discord.js"
import { Clock, Context, Duration, Effect, FiberSet, Layer, Ref } from "effect"
import { DiscordClient } from "./DiscordClient"

/** The id that scopes Discord's per-route buckets: the channel or webhook of a request path. */
export const majorParameter = (path: string): string | undefined => /^\/(?:channels|webhooks)\/(\d+)/.exec(path)?.[1]

/** Seconds in a header, as milliseconds; undefined when absent or not a number. */
const secondsHeader = (value: string | null): number | undefined => {
  if (value === null) return undefined
  const seconds = Number(value)
  return Number.isFinite(seconds) ? seconds * 1000 : undefined
}

/** Empty buckets remembered at most (one per channel or webhook that ran dry); beyond, the oldest is dropped. */
const MAX_TRACKED_BUCKETS = 10_000

/**
 * Bounds the per-channel map (docs/architecture.md, Bounded state at the Discord front): a bucket
 * whose reset has passed is forgotten (it is full again), and at most MAX_TRACKED_BUCKETS stay.
 * Mutates `buckets`, a fresh copy.
 */
export const boundBuckets = (buckets: Map<string, number>, now: number, max = MAX_TRACKED_BUCKETS): Map<string, number> => {
  for (const [key, until] of buckets) if (until <= now) buckets.delete(key)
  for (const key of buckets.keys()) {
    if (buckets.size <= max) break
    buckets.delete(key)
  }
  return buckets
}

/**
 * Reads Discord's rate-limit headers off every REST response. When a channel's or webhook's
 * bucket is empty (`X-RateLimit-Remaining: 0`, or a 429), `awaitReset` waits until it refills,
 * so the reply sink sends the text that is current *then* instead of queueing stale text in
 * discord.js (which honours the same headers for whatever it is given).
 */
export class RateLimitGauge extends Context.Service<RateLimitGauge>()("loopcord/discord/RateLimitGauge", {
  make: Effect.gen(function*() {
    const client = yield* DiscordClient
    const emptyUntil = yield* Ref.make(new Map<string, number>())
    const run = yield* FiberSet.makeRuntime<never>()

    const record = (key: string, resetAfterMs: number | undefined) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.update(emptyUntil, (map) => {
          const next = new Map(map)
          if (resetAfterMs === undefined) next.delete(key)
          else next.set(key, now + resetAfterMs)
          return boundBuckets(next, now)
        }))

    const onResponse = (request: { readonly path: string }, response: { readonly status: number; readonly headers: Headers }) => {
      const key = majorParameter(request.path)
      if (key === undefined) return
      const remaining = response.headers.get("x-ratelimit-remaining")
      const resetAfter = secondsHeader(response.headers.get("x-ratelimit-reset-after"))
      const retryAfter = secondsHeader(response.headers.get("retry-after"))
      if (response.status === 429) run(record(key, retryAfter ?? resetAfter ?? 1000))
      else if (remaining !== null) run(record(key, remaining === "0" ? resetAfter : undefined))
    }
    client.rest.on(RESTEvents.Response, onResponse)
    yield* Effect.addFinalizer(() => Effect.sync(() => client.rest.off(RESTEvents.Response, onResponse)))

    /** Waits until none of `keys` has an empty bucket (at once when none has). */
    const awaitReset = (keys: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const map = yield* Ref.get(emptyUntil)
        const until = Math.max(0, ...keys.map((key) => map.get(key) ?? 0))
        const now = yield* Clock.currentTimeMillis
        if (until > now) {
          yield* Effect.logDebug(`rate limit: waiting ${until - now} ms for the bucket to refill`).pipe(Effect.annotateLogs({ keys: keys.join(",") }))
          yield* Effect.sleep(Duration.millis(until - now))
        }
      })

    return { awaitReset } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
