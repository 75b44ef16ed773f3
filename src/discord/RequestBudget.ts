import { Clock, Config, Context, Deferred, Duration, Effect, Layer, Metric, Option, Queue, Ref, type Scope } from "effect"
import { DiscordConfig } from "../config/DiscordConfig"
import { HOST_BUDGET_ENV, HOST_BUDGET_IPC, ipcSlotSource, processBudgetChannel } from "./hostBudget"
import { discordRateLimitedTotal } from "../ops/metrics"
import { laneRank, type RequestLane, isReplyLane } from "./RequestLane"
import { commit, emptyWindow, nextFreeAt, release, type RequestWindow, reserve } from "./requestWindow"

/**
 * A granted request slot. `commit` once the request is done (it then counts from that moment for
 * the window's length; until then it counts as reserved), `release` when it does not go after
 * all; whichever comes first wins, the other does nothing.
 */
export interface BudgetSlot {
  readonly commit: Effect.Effect<void>
  readonly release: Effect.Effect<void>
}

/**
 * Where slots come from: this process's own window, or a coordinator that serves every shard
 * process of the host (the shards of one bot token share Discord's global limit).
 */
export interface SlotSource {
  /** Waits for a free slot; `lane` is the best lane waiting here (a coordinator ranks processes by it). */
  readonly take: (lane: RequestLane) => Effect.Effect<BudgetSlot>
  /** Nothing is granted before `until` (Clock millis): Discord said the bot hit its global limit. */
  readonly pauseUntil: (until: number) => Effect.Effect<void>
}

export interface ReserveOptions {
  /** Once this completes, the wait goes on in the `final` lane (a reply's pass ended while its edit waited). */
  readonly promoteWhen?: Effect.Effect<void>
}

/** The requests of one process, paced under Discord's global limit, in lane order. */
export interface RequestBudgetService {
  /** Requests per second at most (this process's or host's share); undefined when not enforced. */
  readonly perSecond: number | undefined
  /** Waits for a slot in `lane`. The caller commits or releases it. */
  readonly reserve: (lane: RequestLane, options?: ReserveOptions) => Effect.Effect<BudgetSlot>
  /** Requests carrying reply text that wait for a slot now (typing skips while any do). */
  readonly replyBacklog: Effect.Effect<number>
  /** Discord answered 429 with the global flag: every request waits `retryAfterMs`, counted and logged. */
  readonly globalRateLimited: (retryAfterMs: number, route: string) => Effect.Effect<void>
}

/**
 * Lanes below `first` climb one rank per this much waiting (never above `control`): a typing
 * request or history read that has waited long enough goes before fresh intermediate edits,
 * so a busy shard still starts new turns.
 */
const AGING_STEP = Duration.seconds(3)

/** Slots per `windowMs` of a host: its share of the bot's shards, at least one. */
export const hostShare = (perSecond: number, shards: { readonly ids: ReadonlyArray<number>; readonly count: number } | undefined): number =>
  shards === undefined ? perSecond : Math.max(1, Math.floor((perSecond * shards.ids.length) / shards.count))

/** The slots of this process's own sliding window (every grant counts until committed or released). */
export const localSlotSource = (limit: number, windowMs = 1000): Effect.Effect<SlotSource> =>
  Effect.gen(function*() {
    const window = yield* Ref.make<RequestWindow>(emptyWindow(limit, windowMs))
    const pausedUntil = yield* Ref.make(0)
    // A slot given back frees room at once, and a committed one starts its way out of the
    // window: either way the waiting take looks again.
    const returned = yield* Queue.sliding<void>(1)
    const wake = Queue.offer(returned, undefined)

    const slot: Effect.Effect<BudgetSlot> = Effect.map(Ref.make(false), (settled) => {
      const once = (effect: Effect.Effect<void>) => Effect.flatMap(Ref.getAndSet(settled, true), (done) => (done ? Effect.void : effect))
      return {
        commit: once(Effect.andThen(Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(window, (w) => commit(w, now))), wake)),
        release: once(Effect.andThen(Ref.update(window, release), wake))
      }
    })

    const take = (): Effect.Effect<BudgetSlot> =>
      Effect.gen(function*() {
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          const paused = yield* Ref.get(pausedUntil)
          if (paused > now) {
            yield* Effect.sleep(Duration.millis(paused - now))
            continue
          }
          const taken = yield* Ref.modify(window, (w): readonly [boolean, RequestWindow] => {
            const next = reserve(w, now)
            return next === undefined ? [false, w] : [true, next]
          })
          if (taken) return yield* slot
          const freeAt = nextFreeAt(yield* Ref.get(window), now)
          const untilReturned = Queue.take(returned)
          yield* freeAt === undefined ? untilReturned : Effect.raceFirst(Effect.sleep(Duration.millis(freeAt - now)), untilReturned)
        }
      })

    return {
      take,
      pauseUntil: (until) => Ref.update(pausedUntil, (current) => Math.max(current, until))
    }
  })

interface Waiter {
  readonly lane: RequestLane
  readonly since: number
  readonly granted: Deferred.Deferred<BudgetSlot>
}

/** The rank a waiter is served at now (lower first): its lane's, aged as AGING_STEP says. */
export const effectiveRank = (lane: RequestLane, waitedMs: number, agingStepMs = Duration.toMillis(AGING_STEP)): number => {
  const rank = laneRank(lane)
  const floor = laneRank("control")
  if (rank <= floor) return rank
  return Math.max(floor, rank - Math.floor(waitedMs / agingStepMs))
}

/** The waiter to serve next: the best effective rank, the longest waiting among equals. */
const nextWaiter = <W extends { readonly lane: RequestLane; readonly since: number }>(waiters: ReadonlyArray<W>, now: number): W | undefined => {
  let best: W | undefined
  let bestRank = Number.POSITIVE_INFINITY
  for (const waiter of waiters) {
    const rank = effectiveRank(waiter.lane, now - waiter.since)
    if (rank < bestRank || (rank === bestRank && best !== undefined && waiter.since < best.since)) {
      best = waiter
      bestRank = rank
    }
  }
  return best
}

/**
 * The budget over a slot source: waiters queue by lane, one dispatcher hands each slot to the
 * best waiter at the moment the slot is free (so a final text that arrives while edits wait
 * goes first). A waiter that is interrupted leaves the queue, or gives its slot back.
 */
export const makeRequestBudget = (source: SlotSource, perSecond: number): Effect.Effect<RequestBudgetService, never, Scope.Scope> =>
  Effect.gen(function*() {
    const waiters = yield* Ref.make<ReadonlyArray<Waiter>>([])
    const arrived = yield* Queue.sliding<void>(1)

    const dispatch = Effect.gen(function*() {
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        const head = nextWaiter(yield* Ref.get(waiters), now)
        if (head === undefined) {
          yield* Queue.take(arrived)
          continue
        }
        const slot = yield* source.take(head.lane)
        // The slot goes to whoever is best now (a better waiter may have come while it was awaited).
        yield* Effect.uninterruptible(Effect.gen(function*() {
          const at = yield* Clock.currentTimeMillis
          const chosen = yield* Ref.modify(waiters, (list): readonly [Waiter | undefined, ReadonlyArray<Waiter>] => {
            const best = nextWaiter(list, at)
            return best === undefined ? [undefined, list] : [best, list.filter((waiter) => waiter.granted !== best.granted)]
          })
          if (chosen === undefined) yield* slot.release
          else yield* Deferred.succeed(chosen.granted, slot)
        }))
      }
    })
    yield* Effect.forkScoped(dispatch)

    const isWaiter = (waiter: Waiter) => (other: Waiter) => other.granted === waiter.granted

    const reserveSlot = (lane: RequestLane, options?: ReserveOptions): Effect.Effect<BudgetSlot> =>
      Effect.gen(function*() {
        const granted = yield* Deferred.make<BudgetSlot>()
        const waiter: Waiter = { lane, since: yield* Clock.currentTimeMillis, granted }
        yield* Ref.update(waiters, (list) => [...list, waiter])
        yield* Queue.offer(arrived, undefined)
        const promote = options?.promoteWhen === undefined
          ? Effect.never
          : options.promoteWhen.pipe(
            Effect.andThen(Ref.update(waiters, (list) => list.map((other) => (isWaiter(waiter)(other) ? { ...other, lane: "final" as const } : other)))),
            Effect.andThen(Effect.never)
          )
        return yield* Effect.raceFirst(Deferred.await(granted), promote).pipe(
          Effect.onInterrupt(() =>
            Effect.gen(function*() {
              const queued = yield* Ref.modify(waiters, (list) => [list.some(isWaiter(waiter)), list.filter((other) => !isWaiter(waiter)(other))])
              // Already chosen: the dispatcher completes the grant right away; give it back.
              if (!queued) yield* Effect.flatMap(Deferred.await(granted), (slot) => slot.release)
            })
          )
        )
      })

    const globalRateLimited = (retryAfterMs: number, route: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* source.pauseUntil(now + Math.max(0, retryAfterMs))
        yield* Metric.update(Metric.withAttributes(discordRateLimitedTotal, { scope: "global" }), 1)
        yield* Effect.logWarning(`Discord: global rate limit hit; every request waits ${Math.round(retryAfterMs)} ms`).pipe(Effect.annotateLogs({ route }))
      })

    return {
      perSecond,
      reserve: reserveSlot,
      replyBacklog: Effect.map(Ref.get(waiters), (list) => list.filter((waiter) => isReplyLane(waiter.lane)).length),
      globalRateLimited
    }
  })

/** A slot that needs no budget (pacing off): committing or releasing it does nothing. */
const freeSlot: BudgetSlot = { commit: Effect.void, release: Effect.void }

/** The budget of the Discord front: every REST request of the process takes a slot of it. */
export class RequestBudget extends Context.Service<RequestBudget, RequestBudgetService>()("loopcord/discord/RequestBudget") {
  /**
   * The budget `DISCORD_GLOBAL_REQUESTS_PER_SECOND` sets: a shard process started by
   * `npm run start:sharded` takes its slots from the manager (one budget per host); any other
   * process paces itself on its host's share of the shards.
   */
  static readonly layer = Layer.effect(
    RequestBudget,
    Effect.gen(function*() {
      const config = yield* DiscordConfig
      const mode = yield* Config.String(HOST_BUDGET_ENV).pipe(Config.withDefault(""), Effect.orElseSucceed(() => ""))
      const channel = mode === HOST_BUDGET_IPC ? processBudgetChannel() : undefined
      if (channel !== undefined) return yield* makeRequestBudget(yield* ipcSlotSource(channel), config.globalRequestsPerSecond)
      const share = hostShare(config.globalRequestsPerSecond, config.shards)
      return yield* makeRequestBudget(yield* localSlotSource(share), share)
    })
  )

  /** This process paces itself on its own window of `perSecond` requests per second. */
  static readonly local = (perSecond: number) =>
    Effect.flatMap(localSlotSource(perSecond), (source) => makeRequestBudget(source, perSecond))

  /**
   * No pacing of ours (discord.js's own fixed-window limiter only): what the bot did before the
   * budget. Benchmarks compare against it.
   */
  static readonly off: RequestBudgetService = {
    perSecond: undefined,
    reserve: () => Effect.succeed(freeSlot),
    replyBacklog: Effect.succeed(0),
    globalRateLimited: (retryAfterMs, route) =>
      Effect.andThen(
        Metric.update(Metric.withAttributes(discordRateLimitedTotal, { scope: "global" }), 1),
        Effect.logWarning(`Discord: global rate limit hit; discord.js waits ${Math.round(retryAfterMs)} ms`).pipe(Effect.annotateLogs({ route }))
      )
  }
}

/** Reserves a slot in `lane`, or none when it is not granted within `patience` (typing is worthless late). */
export const reserveWithin = (budget: RequestBudgetService, lane: RequestLane, patience: Duration.Input): Effect.Effect<Option.Option<BudgetSlot>> =>
  Effect.timeoutOption(budget.reserve(lane), patience)
