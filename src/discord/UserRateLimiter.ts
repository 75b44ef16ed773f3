import { Clock, Context, Effect, HashMap, Layer, Ref } from "effect"

/** The window a server's "messages per minute" counts in. */
const RATE_WINDOW_MS = 60_000
/** Users tracked at most (every server together); past it, users idle for a whole window are forgotten first. */
export const MAX_TRACKED_USERS = 10_000

interface UserWindow {
  /** When the messages admitted in the current window arrived, oldest first (at most the limit). */
  readonly admitted: ReadonlyArray<number>
  /** The user was told about a refusal since their last admitted message. */
  readonly told: boolean
  readonly lastSeen: number
}

type RateDecision =
  | { readonly _tag: "Admitted" }
  /** `notify`: the first refusal since the user's last admitted message (they are told once, not per message). */
  | { readonly _tag: "Refused"; readonly notify: boolean; readonly retryAfterMs: number }

/** Drops users idle for a whole window; if that is not enough, every user but the most recently seen half. */
const pruned = (users: HashMap.HashMap<string, UserWindow>, now: number): HashMap.HashMap<string, UserWindow> => {
  const active = HashMap.filter(users, (window) => now - window.lastSeen < RATE_WINDOW_MS)
  if (HashMap.size(active) < MAX_TRACKED_USERS) return active
  const newest = [...active].sort(([, a], [, b]) => b.lastSeen - a.lastSeen).slice(0, Math.floor(MAX_TRACKED_USERS / 2))
  return HashMap.fromIterable(newest)
}

/**
 * A sliding one-minute window per user and server (`/access rate`), in memory: a refused message
 * never reaches the queue, so it costs no model call. Bounded by MAX_TRACKED_USERS; times come
 * from the Effect Clock.
 */
export class UserRateLimiter extends Context.Service<UserRateLimiter>()("loopcord/discord/UserRateLimiter", {
  make: Effect.gen(function*() {
    const users = yield* Ref.make(HashMap.empty<string, UserWindow>())

    /** Counts the message if `perMinute` allows it (0: no limit, nothing is tracked). */
    const admit = (key: string, perMinute: number): Effect.Effect<RateDecision> =>
      perMinute <= 0 ? Effect.succeed({ _tag: "Admitted" }) : Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.modify(users, (all): [RateDecision, HashMap.HashMap<string, UserWindow>] => {
          const previous = HashMap.get(all, key)
          const recent = previous._tag === "Some" ? previous.value.admitted.filter((at) => now - at < RATE_WINDOW_MS) : []
          const bounded = HashMap.size(all) >= MAX_TRACKED_USERS && previous._tag === "None" ? pruned(all, now) : all
          if (recent.length < perMinute) {
            const next = { admitted: [...recent, now].slice(-perMinute), told: false, lastSeen: now }
            return [{ _tag: "Admitted" }, HashMap.set(bounded, key, next)]
          }
          const oldest = recent[0] ?? now
          const told = previous._tag === "Some" && previous.value.told
          return [
            { _tag: "Refused", notify: !told, retryAfterMs: Math.max(1, RATE_WINDOW_MS - (now - oldest)) },
            HashMap.set(bounded, key, { admitted: recent, told: true, lastSeen: now })
          ]
        }))

    /** Users tracked now (tests, metrics). */
    const tracked = Effect.map(Ref.get(users), HashMap.size)

    return { admit, tracked } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
