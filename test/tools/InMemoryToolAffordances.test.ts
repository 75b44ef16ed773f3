import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { AFFORDANCE_WINDOW_TTL, make, makeWith, MAX_AFFORDANCE_CHANNELS, MAX_RETAINED_TOOLS } from "../../src/tools/InMemoryToolAffordances"

describe("ToolAffordances in memory (seed step 7, design decision 2)", () => {
  it.effect("a retained tool stays for the next N turns of its channel only", () =>
    Effect.gen(function*() {
      const affordances = yield* make
      yield* affordances.retain("c1", "web_search", 2)
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["web_search"])
      assert.deepStrictEqual(yield* affordances.retained("c2"), [])
      yield* affordances.turnEnded("c1") // the retaining turn
      yield* affordances.turnEnded("c1") // next turn 1
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["web_search"])
      yield* affordances.turnEnded("c1") // next turn 2
      assert.deepStrictEqual(yield* affordances.retained("c1"), [])
    }))

  it.effect("retaining again never shortens a window; zero turns retain nothing", () =>
    Effect.gen(function*() {
      const affordances = yield* make
      yield* affordances.retain("c1", "a", 3)
      yield* affordances.retain("c1", "a", 1)
      yield* affordances.retain("c1", "b", 0)
      for (let i = 0; i < 3; i++) yield* affordances.turnEnded("c1")
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["a"])
      yield* affordances.turnEnded("c1")
      assert.deepStrictEqual(yield* affordances.retained("c1"), [])
    }))

  it.effect("[issue 11] windows expire on the Clock an hour after they were last extended, turns left or not", () =>
    Effect.gen(function*() {
      assert.strictEqual(Duration.format(AFFORDANCE_WINDOW_TTL), "1h")
      const affordances = yield* make
      yield* affordances.retain("c1", "a", 3)
      yield* affordances.retain("c2", "b", 3)
      yield* TestClock.adjust("30 minutes")
      yield* affordances.retain("c2", "b", 1) // extends c2's expiry, not its turns
      yield* TestClock.adjust("29 minutes")
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["a"])
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(yield* affordances.retained("c1"), [], "an hour after it was extended")
      assert.deepStrictEqual(yield* affordances.retained("c2"), ["b"])
      yield* affordances.turnEnded("c1")
      yield* affordances.retain("c1", "c", 1)
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["c"], "the expired tool does not come back with a new one")
      yield* TestClock.adjust("30 minutes")
      assert.deepStrictEqual(yield* affordances.retained("c2"), [])
    }))

  it.effect("[issue 11] at most MAX_AFFORDANCE_CHANNELS channels: the one extended longest ago is dropped", () =>
    Effect.gen(function*() {
      assert.strictEqual(MAX_AFFORDANCE_CHANNELS, 10_000)
      const affordances = yield* makeWith({ maxChannels: 3 })
      for (const channel of ["c1", "c2", "c3"]) {
        yield* affordances.retain(channel, "a", 5)
        yield* TestClock.adjust("1 second")
      }
      yield* affordances.retain("c1", "a", 5) // c1 is now the most recently extended
      yield* affordances.retain("c4", "a", 5)
      const kept = yield* Effect.forEach(["c1", "c2", "c3", "c4"], (channel) => Effect.map(affordances.retained(channel), (tools) => tools.length > 0))
      assert.deepStrictEqual(kept, [true, false, true, true])
    }))

  it.effect("[issue 11] at most MAX_RETAINED_TOOLS tools per channel: the one with the fewest turns left is dropped", () =>
    Effect.gen(function*() {
      assert.strictEqual(MAX_RETAINED_TOOLS, 64)
      const affordances = yield* makeWith({ maxToolsPerChannel: 2 })
      yield* affordances.retain("c1", "long", 5)
      yield* affordances.retain("c1", "short", 1)
      yield* affordances.retain("c1", "new", 1)
      assert.deepStrictEqual(yield* affordances.retained("c1"), ["long", "new"])
    }))
})
