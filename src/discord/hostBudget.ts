import { Clock, Deferred, Effect, Fiber, FiberSet, Ref, type Scope } from "effect"
import type { BudgetSlot, RequestBudgetService, SlotSource } from "./RequestBudget"
import { LANES, type RequestLane } from "./RequestLane"

/**
 * One request budget for every shard process of a host. Discord's global limit is per bot
 * token, so the processes `npm run start:sharded` starts cannot each pace themselves on the
 * whole of it. The manager holds the host's budget; a shard process takes every slot from it
 * over the IPC channel the manager already has to it (a few hundred bytes per request, well
 * under a millisecond on one host), ranked across processes by the best lane each has waiting.
 * Dividing the budget instead would hold a busy shard to its fraction while the others idle.
 *
 * Messages (both ways) are `{ loopcordBudget: op, id, … }`; other IPC traffic is discord.js's.
 */
export type BudgetMessage =
  | { readonly loopcordBudget: "take"; readonly id: number; readonly lane: RequestLane }
  | { readonly loopcordBudget: "grant"; readonly id: number }
  | { readonly loopcordBudget: "sent"; readonly id: number }
  | { readonly loopcordBudget: "release"; readonly id: number }
  | { readonly loopcordBudget: "pause"; readonly ms: number }

/** The environment variable the manager sets in its shard processes: take slots over IPC. */
export const HOST_BUDGET_ENV = "LOOPCORD_HOST_BUDGET"
export const HOST_BUDGET_IPC = "ipc"

const isLane = (value: unknown): value is RequestLane => typeof value === "string" && (LANES as ReadonlyArray<string>).includes(value)

/** A budget message, or undefined for anything else (discord.js's own messages, garbage). */
export const decodeBudgetMessage = (raw: unknown): BudgetMessage | undefined => {
  if (typeof raw !== "object" || raw === null || !("loopcordBudget" in raw)) return undefined
  const op = raw.loopcordBudget
  const id = "id" in raw && typeof raw.id === "number" && Number.isSafeInteger(raw.id) ? raw.id : undefined
  switch (op) {
    case "take":
      return id !== undefined && "lane" in raw && isLane(raw.lane) ? { loopcordBudget: "take", id, lane: raw.lane } : undefined
    case "grant":
    case "sent":
    case "release":
      return id === undefined ? undefined : { loopcordBudget: op, id }
    case "pause":
      return "ms" in raw && typeof raw.ms === "number" && Number.isFinite(raw.ms) && raw.ms >= 0 ? { loopcordBudget: "pause", ms: Math.min(raw.ms, 60_000) } : undefined
    default:
      return undefined
  }
}

/** The two ends of an IPC channel as the shard side sees them. */
export interface BudgetChannel {
  readonly send: (message: BudgetMessage) => void
  /** Registers the handler of incoming messages; returns its removal. */
  readonly listen: (handler: (message: BudgetMessage) => void) => () => void
}

/**
 * The shard side: slots come from the manager. A take waits for its grant; interrupted, it
 * gives the grant back whenever it comes.
 */
export const ipcSlotSource = (channel: BudgetChannel): Effect.Effect<SlotSource, never, Scope.Scope> =>
  Effect.gen(function*() {
    const nextId = yield* Ref.make(0)
    const pending = yield* Ref.make(new Map<number, Deferred.Deferred<void>>())
    const run = yield* FiberSet.makeRuntime<never>()
    const unlisten = channel.listen((message) => {
      if (message.loopcordBudget !== "grant") return
      run(Effect.gen(function*() {
        const waiting = (yield* Ref.get(pending)).get(message.id)
        // A grant nobody waits for any more (the take was interrupted) goes straight back.
        if (waiting === undefined) return channel.send({ loopcordBudget: "release", id: message.id })
        yield* Deferred.succeed(waiting, undefined)
      }))
    })
    yield* Effect.addFinalizer(() => Effect.sync(unlisten))

    const slotFor = (id: number): Effect.Effect<BudgetSlot> =>
      Effect.map(Ref.make(false), (settled) => {
        const once = (op: "sent" | "release") =>
          Effect.flatMap(Ref.getAndSet(settled, true), (done) => (done ? Effect.void : Effect.sync(() => channel.send({ loopcordBudget: op, id }))))
        return { commit: once("sent"), release: once("release") }
      })

    const take = (lane: RequestLane): Effect.Effect<BudgetSlot> =>
      Effect.gen(function*() {
        const id = yield* Ref.getAndUpdate(nextId, (n) => n + 1)
        const granted = yield* Deferred.make<void>()
        yield* Ref.update(pending, (map) => new Map(map).set(id, granted))
        yield* Effect.sync(() => channel.send({ loopcordBudget: "take", id, lane }))
        yield* Deferred.await(granted).pipe(
          Effect.ensuring(Ref.update(pending, (map) => {
            const next = new Map(map)
            next.delete(id)
            return next
          })),
          Effect.onInterrupt(() =>
            // Granted before the interruption: give it back now (a later grant is returned on arrival).
            Effect.flatMap(Deferred.isDone(granted), (done) => (done ? Effect.sync(() => channel.send({ loopcordBudget: "release", id })) : Effect.void))
          )
        )
        return yield* slotFor(id)
      })

    return {
      take,
      pauseUntil: (until) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => channel.send({ loopcordBudget: "pause", ms: Math.max(0, until - now) })))
    }
  })

/**
 * The manager side: serves the shard processes from the host's budget. `serve(shard, message,
 * reply)` handles one message of a shard; `forget(shard)` gives back everything a dead shard
 * process held or waited for.
 */
export const hostBudgetServer = (budget: RequestBudgetService, pauseUntil: (until: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    /** Per shard: the takes under way (fibers) and the slots granted, by the shard's id. */
    const takes = yield* Ref.make(new Map<string, Fiber.Fiber<BudgetSlot>>())
    const granted = yield* Ref.make(new Map<string, BudgetSlot>())
    const run = yield* FiberSet.makeRuntime<never>()
    const key = (shard: number, id: number) => `${shard}:${id}`

    const settle = (shard: number, id: number, use: (slot: BudgetSlot) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        const k = key(shard, id)
        const slot = yield* Ref.modify(granted, (map) => {
          const found = map.get(k)
          if (found === undefined) return [undefined, map]
          const next = new Map(map)
          next.delete(k)
          return [found, next]
        })
        if (slot !== undefined) return yield* use(slot)
        // Still being taken: stop it (its slot, if it just came, goes back).
        const fiber = (yield* Ref.get(takes)).get(k)
        if (fiber !== undefined) yield* Fiber.interrupt(fiber)
      })

    const serve = (shard: number, message: BudgetMessage, reply: (message: BudgetMessage) => void): Effect.Effect<void> => {
      switch (message.loopcordBudget) {
        case "take":
          return Effect.gen(function*() {
            const k = key(shard, message.id)
            // Only the wait can be interrupted: a slot once granted is always recorded (so it can be given back).
            const fiber = run(
              Effect.uninterruptibleMask((restore) =>
                restore(budget.reserve(message.lane)).pipe(
                  Effect.tap((slot) =>
                    Effect.andThen(
                      Ref.update(granted, (map) => new Map(map).set(k, slot)),
                      Effect.sync(() => reply({ loopcordBudget: "grant", id: message.id }))
                    )
                  ),
                  Effect.ensuring(Ref.update(takes, (map) => {
                    const next = new Map(map)
                    next.delete(k)
                    return next
                  }))
                )
              )
            )
            // A slot granted at once has run the take to its end already: nothing to record.
            yield* Ref.update(takes, (map) => (fiber.pollUnsafe() === undefined ? new Map(map).set(k, fiber) : map))
          })
        case "sent":
          return settle(shard, message.id, (slot) => slot.commit)
        case "release":
          return settle(shard, message.id, (slot) => slot.release)
        case "pause":
          return Effect.flatMap(Clock.currentTimeMillis, (now) => pauseUntil(now + message.ms))
        case "grant":
          return Effect.void
      }
    }

    const forget = (shard: number): Effect.Effect<void> =>
      Effect.gen(function*() {
        const prefix = `${shard}:`
        const slots = yield* Ref.modify(granted, (map) => {
          const mine = [...map].filter(([k]) => k.startsWith(prefix))
          const rest = new Map([...map].filter(([k]) => !k.startsWith(prefix)))
          return [mine.map(([, slot]) => slot), rest]
        })
        yield* Effect.forEach(slots, (slot) => slot.release, { discard: true })
        const fibers = [...(yield* Ref.get(takes))].filter(([k]) => k.startsWith(prefix)).map(([, fiber]) => fiber)
        yield* Fiber.interruptAll(fibers)
      })

    return { serve, forget } as const
  })

/** This process's IPC channel to the manager that started it (none outside a shard process). */
export const processBudgetChannel = (): BudgetChannel | undefined => {
  const send = process.send?.bind(process)
  if (send === undefined) return undefined
  return {
    send: (message) => {
      send(message)
    },
    listen: (handler) => {
      const listener = (raw: unknown) => {
        const message = decodeBudgetMessage(raw)
        if (message !== undefined) handler(message)
      }
      process.on("message", listener)
      return () => {
        process.off("message", listener)
      }
    }
  }
}
