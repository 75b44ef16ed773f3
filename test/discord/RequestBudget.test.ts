import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import { type BudgetSlot, effectiveRank, hostShare, localSlotSource, makeRequestBudget, type RequestBudgetService } from "../../src/discord/RequestBudget"
import type { RequestLane } from "../../src/discord/RequestLane"
import { isExemptFromGlobalLimit, laneOfRoute } from "../../src/discord/RequestLane"
import { commit, emptyWindow, freeSlots, nextFreeAt, release, reserve } from "../../src/discord/requestWindow"
import { type BudgetChannel, type BudgetMessage, hostBudgetServer, ipcSlotSource } from "../../src/discord/hostBudget"

/** Takes `count` slots in `lane`, each committed `holdMs` after it was granted; returns the grant times. */
const burst = (budget: RequestBudgetService, lane: RequestLane, count: number, log: Ref.Ref<ReadonlyArray<readonly [RequestLane, number]>>) =>
  Effect.forEach(Array.from({ length: count }), () =>
    Effect.forkChild(Effect.gen(function*() {
      const slot = yield* budget.reserve(lane)
      const at = yield* Clock.currentTimeMillis
      yield* Ref.update(log, (all) => [...all, [lane, at] as const])
      yield* slot.commit
    })))

/** The most entries of `times` in any span of `windowMs` (sliding). */
const peak = (times: ReadonlyArray<number>, windowMs = 1000) => {
  const sorted = [...times].sort((a, b) => a - b)
  let best = 0
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start++
    best = Math.max(best, end - start + 1)
  }
  return best
}

describe("requestWindow (pure)", () => {
  it("counts any 1-s span: two half-full fixed windows back to back are one full window", () => {
    let window = emptyWindow(4)
    for (const at of [600, 700, 800, 900]) {
      window = reserve(window, at) ?? assert.fail(`slot at ${at}`)
      window = commit(window, at)
    }
    // A fixed window would open at 1000 with 4 fresh slots; the sliding one frees them as the sends age.
    assert.isUndefined(reserve(window, 1000))
    assert.strictEqual(nextFreeAt(window, 1000), 1600)
    assert.isDefined(reserve(window, 1600))
    assert.strictEqual(freeSlots(window, 1750), 2)
  })

  it("a granted slot counts until it is committed or released", () => {
    let window = emptyWindow(2)
    window = reserve(window, 0) ?? assert.fail()
    window = reserve(window, 0) ?? assert.fail()
    assert.isUndefined(reserve(window, 5000), "reserved slots never age out")
    assert.isUndefined(nextFreeAt(window, 5000), "only a release or a commit frees them")
    window = release(window)
    assert.strictEqual(freeSlots(window, 5000), 1)
    window = commit(window, 5000)
    assert.strictEqual(freeSlots(window, 5999), 1)
    assert.strictEqual(freeSlots(window, 6000), 2)
  })
})

describe("RequestLane", () => {
  it("interaction responses are exempt; typing and message reads are background", () => {
    assert.isTrue(isExemptFromGlobalLimit("/interactions/123/tok/callback", "9"))
    assert.isTrue(isExemptFromGlobalLimit("/webhooks/9/tok/messages/@original", "9"))
    assert.isFalse(isExemptFromGlobalLimit("/webhooks/8/tok", "9"))
    assert.isFalse(isExemptFromGlobalLimit("/channels/1/messages", "9"))
    assert.strictEqual(laneOfRoute("POST", "/channels/1/typing"), "background")
    assert.strictEqual(laneOfRoute("GET", "/channels/1/messages"), "background")
    assert.strictEqual(laneOfRoute("POST", "/channels/1/messages"), "control")
  })

  it("a host's share of the budget follows its share of the shards", () => {
    assert.strictEqual(hostShare(45, undefined), 45)
    assert.strictEqual(hostShare(45, { ids: [0, 1], count: 4 }), 22)
    assert.strictEqual(hostShare(45, { ids: [0], count: 100 }), 1)
  })

  it("waiting lanes climb toward control, never past first", () => {
    assert.strictEqual(effectiveRank("background", 0), 4)
    assert.strictEqual(effectiveRank("background", 3000), 3)
    assert.strictEqual(effectiveRank("background", 60_000), 2)
    assert.strictEqual(effectiveRank("edit", 60_000), 2)
    assert.strictEqual(effectiveRank("first", 60_000), 1)
  })
})

describe("RequestBudget (TestClock)", () => {
  it.effect("40 requests at once: at most 10 in any second, whatever the windows", () =>
    Effect.gen(function*() {
      const budget = yield* makeRequestBudget(yield* localSlotSource(10), 10)
      const log = yield* Ref.make<ReadonlyArray<readonly [RequestLane, number]>>([])
      const fibers = yield* burst(budget, "edit", 40, log)
      for (let i = 0; i < 50; i++) yield* TestClock.adjust("100 millis")
      yield* Fiber.joinAll(fibers)
      const times = (yield* Ref.get(log)).map(([, at]) => at)
      assert.strictEqual(times.length, 40)
      assert.strictEqual(peak(times), 10)
      // Paced, not stalled: 40 requests at 10/s take about 3 s.
      assert.isAtMost(Math.max(...times), 3_000)
    }))

  it.effect("a final text and a first message go ahead of waiting edits; typing goes last", () =>
    Effect.gen(function*() {
      const budget = yield* makeRequestBudget(yield* localSlotSource(2), 2)
      const log = yield* Ref.make<ReadonlyArray<readonly [RequestLane, number]>>([])
      // Fill the window, then queue in the worst order.
      yield* burst(budget, "edit", 2, log)
      yield* TestClock.adjust("1 millis")
      yield* burst(budget, "background", 1, log)
      yield* burst(budget, "edit", 2, log)
      yield* burst(budget, "first", 1, log)
      yield* burst(budget, "final", 1, log)
      for (let i = 0; i < 40; i++) yield* TestClock.adjust("100 millis")
      const order = (yield* Ref.get(log)).slice(2).map(([lane]) => lane)
      assert.deepStrictEqual(order, ["final", "first", "edit", "edit", "background"])
    }))

  it.effect("a background request that waited long enough goes before newer edits (no starvation)", () =>
    Effect.gen(function*() {
      const budget = yield* makeRequestBudget(yield* localSlotSource(1), 1)
      const log = yield* Ref.make<ReadonlyArray<readonly [RequestLane, number]>>([])
      // The window is full when the background request comes.
      yield* burst(budget, "control", 1, log)
      yield* TestClock.adjust("1 millis")
      yield* burst(budget, "background", 1, log)
      // A stream of edits keeps arriving, one every half second, for 10 s.
      const edits = yield* Effect.forkChild(Effect.forEach(Array.from({ length: 20 }), () =>
        Effect.andThen(burst(budget, "edit", 1, log), TestClock.adjust("500 millis")), { discard: true }))
      yield* Fiber.join(edits)
      for (let i = 0; i < 30; i++) yield* TestClock.adjust("1 second")
      const background = (yield* Ref.get(log)).find(([lane]) => lane === "background")
      assert.isDefined(background)
      assert.isAtMost(background?.[1] ?? Infinity, 7000, "served once aged to control rank, not after every edit")
    }))

  it.effect("an edit waiting when its pass ends is promoted to the final lane", () =>
    Effect.gen(function*() {
      const budget = yield* makeRequestBudget(yield* localSlotSource(1), 1)
      const log = yield* Ref.make<ReadonlyArray<readonly [RequestLane, number]>>([])
      yield* burst(budget, "edit", 1, log)
      yield* TestClock.adjust("1 millis")
      yield* burst(budget, "edit", 3, log)
      const passEnded = yield* Deferred.make<void>()
      const promoted = yield* Effect.forkChild(Effect.gen(function*() {
        const slot = yield* budget.reserve("edit", { promoteWhen: Deferred.await(passEnded) })
        yield* Ref.update(log, (all) => [...all, ["final", 0] as const])
        yield* slot.commit
      }))
      yield* Deferred.succeed(passEnded, undefined)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(promoted)
      assert.strictEqual((yield* Ref.get(log))[1]?.[0], "final", "served before the three edits queued ahead of it")
    }))

  it.effect("an interrupted wait leaves the queue; an unused slot given back frees room at once", () =>
    Effect.gen(function*() {
      const budget = yield* makeRequestBudget(yield* localSlotSource(1), 1)
      const held = yield* budget.reserve("control")
      const waiting = yield* Effect.forkChild(budget.reserve("edit"))
      yield* TestClock.adjust("10 millis")
      yield* Fiber.interrupt(waiting)
      assert.strictEqual(yield* budget.replyBacklog, 0)
      yield* held.release
      const next = yield* Effect.forkChild(budget.reserve("first"))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(next.pollUnsafe() !== undefined, "granted without waiting for the window")
    }))

  it.effect("a 429 with the global flag stops every grant for its retry_after", () =>
    Effect.gen(function*() {
      const budget = yield* makeRequestBudget(yield* localSlotSource(10), 10)
      yield* budget.globalRateLimited(2000, "/channels/1/messages")
      const log = yield* Ref.make<ReadonlyArray<readonly [RequestLane, number]>>([])
      yield* burst(budget, "final", 1, log)
      yield* TestClock.adjust("1999 millis")
      assert.strictEqual((yield* Ref.get(log)).length, 0)
      yield* TestClock.adjust("2 millis")
      assert.strictEqual((yield* Ref.get(log)).length, 1)
    }))
})

/** Two in-memory ends of an IPC channel (messages delivered on the next tick, as over a pipe). */
const pipePair = () => {
  const handlers: { shard: Array<(message: BudgetMessage) => void>; manager: Array<(message: BudgetMessage) => void> } = { shard: [], manager: [] }
  const deliver = (to: "shard" | "manager", message: BudgetMessage) => queueMicrotask(() => handlers[to].forEach((handler) => handler(message)))
  const shard: BudgetChannel = {
    send: (message) => deliver("manager", message),
    listen: (handler) => {
      handlers.shard.push(handler)
      return () => handlers.shard.splice(handlers.shard.indexOf(handler), 1)
    }
  }
  return { shard, onManager: (handler: (message: BudgetMessage) => void) => handlers.manager.push(handler), toShard: (message: BudgetMessage) => deliver("shard", message) }
}

describe("one budget per host (shard processes over IPC)", () => {
  it.live("two shard processes share the manager's 4 requests per second", () =>
    Effect.scoped(Effect.gen(function*() {
      const hostSource = yield* localSlotSource(4)
      const host = yield* makeRequestBudget(hostSource, 4)
      const server = yield* hostBudgetServer(host, hostSource.pauseUntil)
      const run = Effect.runForkWith(yield* Effect.context<never>())
      const shards = yield* Effect.forEach([0, 1], (id) =>
        Effect.gen(function*() {
          const pipe = pipePair()
          pipe.onManager((message) => void run(server.serve(id, message, pipe.toShard)))
          return yield* makeRequestBudget(yield* ipcSlotSource(pipe.shard), 4)
        }))
      const granted = yield* Ref.make<ReadonlyArray<number>>([])
      const take = (budget: RequestBudgetService) =>
        Effect.gen(function*() {
          const slot: BudgetSlot = yield* budget.reserve("edit")
          yield* Ref.update(granted, (all) => [...all, Date.now()])
          yield* slot.commit
        })
      const fibers = yield* Effect.forEach(shards, (budget) => Effect.forkChild(Effect.all(Array.from({ length: 3 }, () => take(budget)), { concurrency: "unbounded" })))
      yield* Effect.sleep("300 millis")
      assert.strictEqual((yield* Ref.get(granted)).length, 4, "the host's 4, not 4 per shard")
      yield* Fiber.joinAll(fibers)
      assert.strictEqual((yield* Ref.get(granted)).length, 6)
      const times = yield* Ref.get(granted)
      assert.isAtLeast(Math.max(...times) - Math.min(...times), 900, "the last two waited for the host's window")
    })), { timeout: 10_000 })
})
